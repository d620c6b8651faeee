import { z } from 'zod';
import { SECRET_NAME_PATTERN, SECRET_VALUE_MAX_BYTES } from '@veetbot/domain';
import { Timestamp } from './common';

/**
 * A tenant secret's name (ADR 0017): a letter, then up to 63 of letters, digits, `_`, `.`, `-`.
 * A tenant MCP server references it as `credential_ref: "secret:NAME"`.
 */
export const SecretName = z.string().regex(SECRET_NAME_PATTERN, 'a secret name is a letter, then up to 63 of A-Z a-z 0-9 _ . -');

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * PUT /v1/secrets/{name}: the value, write-only. At most 16 KiB of UTF-8, not empty, no NUL
 * (a header or an environment cannot carry one), no lone surrogate. The API never returns it.
 */
export const PutSecretRequest = z
  .object({
    value: z
      .string()
      .min(1)
      .refine((v) => new TextEncoder().encode(v).length <= SECRET_VALUE_MAX_BYTES, `at most ${SECRET_VALUE_MAX_BYTES} bytes of UTF-8`)
      .refine((v) => !v.includes('\u0000'), 'no NUL character')
      // A lone surrogate has no UTF-8 form: it would be stored as U+FFFD, a different secret.
      .refine((v) => !LONE_SURROGATE.test(v), 'no lone surrogate'),
  })
  .strict();
export type PutSecretRequest = z.infer<typeof PutSecretRequest>;

/** What a tenant may read back: name and times; never the value. */
export const Secret = z.object({
  name: z.string(),
  created_at: Timestamp,
  /** The last PUT that replaced the value; null until then. */
  rotated_at: Timestamp.nullable(),
});
export type Secret = z.infer<typeof Secret>;

export const SecretList = z.object({ secrets: z.array(Secret) });
export type SecretList = z.infer<typeof SecretList>;
