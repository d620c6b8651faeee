// `node --import ./register.mjs`: the conformance suite imports `globSync` from `fs`, which Node
// 22 has and Node 20 (the project's runtime) does not. This hook gives the suite an `fs` that is
// Node's own plus that one function; nothing else is changed (docs/adr/0059).
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
