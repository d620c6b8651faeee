/**
 * § ToolExecutionContext / § Where a server may live: a credential_ref says where a secret is,
 * never what it is ("Credentials are never inline"). Three kinds (ADR 0017):
 *
 *   env:NAME          the operator's process environment  — operator configuration only
 *   file:/abs/path    a file on the operator's host        — operator configuration only
 *   secret:NAME       the calling tenant's own secret      — tenant rows only
 *
 * Syntax only: nothing here dereferences a reference.
 */
export type CredentialRef =
  | { readonly kind: 'env'; readonly name: string }
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'secret'; readonly name: string };

/** Who configured the server a reference belongs to: decides which kinds it may use (ADR 0017). */
export type CredentialOrigin = 'operator' | 'tenant';

/** The reference kinds each origin may use. */
export const CREDENTIAL_REF_KINDS: Readonly<Record<CredentialOrigin, readonly CredentialRef['kind'][]>> = {
  operator: ['env', 'file'],
  tenant: ['secret'],
};

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

/** A tenant secret's name (ADR 0017): a letter, then up to 63 of letters, digits, `_`, `.`, `-`. */
export const SECRET_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
/** A tenant secret's value: at most 16 KiB of UTF-8 (a token or a key, not a file). */
export const SECRET_VALUE_MAX_BYTES = 16 * 1024;
export const SECRET_REF_PREFIX = 'secret:';

export function isValidSecretName(value: unknown): value is string {
  return typeof value === 'string' && SECRET_NAME_PATTERN.test(value);
}

/**
 * Parse a reference by syntax alone; null when it is not one. A file path is absolute, has no
 * `..` segment and no NUL byte.
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
  if (value.startsWith(SECRET_REF_PREFIX)) {
    const name = value.slice(SECRET_REF_PREFIX.length);
    return isValidSecretName(name) ? { kind: 'secret', name } : null;
  }
  return null;
}

/** For configuration validation: is this a well-formed credential reference? Syntax only. */
export function isCredentialRef(value: unknown): value is string {
  return parseCredentialRef(value) !== null;
}
