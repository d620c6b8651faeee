import { VeetbotError } from '@veetbot/domain';

/**
 * Why a credential reference did not resolve.
 *
 *   credential.invalid_ref   not `env:NAME` or `file:/absolute/path` (or a NAME/path that breaks
 *                            the grammar)
 *   credential.not_found     the variable is unset or empty; the file does not exist or is empty
 *   credential.file_refused  the file exists but may not be used: a symlink, not a regular file,
 *                            outside every allowed root, over 64 KiB, unreadable, or not UTF-8
 *
 * A message never contains the secret value. It names the reference only when the reference is
 * well-formed: a malformed one may be a value pasted where a reference belongs, so it is never
 * echoed (`reference` is then null).
 */
export type CredentialErrorCode = 'credential.invalid_ref' | 'credential.not_found' | 'credential.file_refused';

export class CredentialError extends VeetbotError {
  declare readonly code: CredentialErrorCode;
  readonly reference: string | null;
  constructor(code: CredentialErrorCode, reference: string | null, message: string) {
    super(code, message);
    this.reference = reference;
  }
}
