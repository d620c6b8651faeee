export { BubblewrapSandbox, type BubblewrapSandboxOptions } from './bubblewrap-sandbox';
