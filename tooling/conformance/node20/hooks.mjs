// Resolve hook (see register.mjs): `fs` / `node:fs` imported from outside the shim is the shim.
const SHIM = new URL('./fs.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL !== SHIM) return { url: SHIM, shortCircuit: true };
  return next(specifier, context);
}
