import { VeetbotError } from '@veetbot/domain';

/**
 * Why a credential reference did not resolve.
 *
 *   credential.invalid_ref   not `env:NAME` or `file:/absolute/path` (or a NAME/path that breaks
 *                            the grammar)
 *   credential.not_found     the variable is unset or empty; the file does not exist or is empty
 *   credential.file_refused  the file exists but may not be used: a symlink, not a regular file,
 *                            outside every allowed root, over 64 KiB, unreadable, or not UTF-8
 *   credential.ref_not_allowed  a well-formed reference of a kind its server's origin may not
 *                            use (ADR 0017: env:/file: operator only, secret: tenant only)
 *   credential.key_invalid   a secrets key is not base64 of 32 bytes, or its file is unsafe
 *   credential.key_missing   no secrets key is configured and none may be generated
 *   credential.key_unknown   a stored secret names a key this process does not hold
 *   credential.secret_unreadable  a stored secret does not authenticate for its tenant and name
 *
 * A message never contains the secret value. It names the reference only when the reference is
 * well-formed: a malformed one may be a value pasted where a reference belongs, so it is never
 * echoed (`reference` is then null).
 */
export type CredentialErrorCode =
  | 'credential.invalid_ref'
  | 'credential.not_found'
  | 'credential.file_refused'
  | 'credential.ref_not_allowed'
  | 'credential.key_invalid'
  | 'credential.key_missing'
  | 'credential.key_unknown'
  | 'credential.secret_unreadable';

export class CredentialError extends VeetbotError {
  declare readonly code: CredentialErrorCode;
  readonly reference: string | null;
  constructor(code: CredentialErrorCode, reference: string | null, message: string) {
    super(code, message);
    this.reference = reference;
  }
}
