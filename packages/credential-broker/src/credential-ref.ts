/** § ToolExecutionContext: a credential_ref is `env:NAME` or `file:/absolute/path`. */
export type CredentialRef =
  | { readonly kind: 'env'; readonly name: string }
  | { readonly kind: 'file'; readonly path: string };

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

/**
 * Parse a reference by syntax alone; never dereferences. Null when it is not one.
 * A file path is absolute, has no `..` segment and no NUL byte.
 */
export function parseCredentialRef(value: unknown): CredentialRef | null {
  if (typeof value !== 'string') return null;
  if (value.startsWith('env:')) {
    const name = value.slice(4);
    return ENV_NAME.test(name) ? { kind: 'env', name } : null;
  }
  if (value.startsWith('file:')) {
    const path = value.slice(5);
    if (!path.startsWith('/') || path.includes('\0')) return null;
    if (path.split('/').includes('..')) return null;
    return { kind: 'file', path };
  }
  return null;
}

/** For configuration validation: is this a well-formed credential reference? Syntax only. */
export function isCredentialRef(value: unknown): value is string {
  return parseCredentialRef(value) !== null;
}
