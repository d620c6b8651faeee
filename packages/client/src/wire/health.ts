import { z } from 'zod';

export const Health = z.object({ status: z.literal('ok') }).strict();
export type Health = z.infer<typeof Health>;

export const Readiness = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    database: z
      .object({
        reachable: z.boolean(),
        migrations_applied: z.number().int().nonnegative(),
        migrations_expected: z.number().int().nonnegative(),
      })
      .strict(),
  })
  .strict();
export type Readiness = z.infer<typeof Readiness>;
