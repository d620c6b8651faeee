import { z } from 'zod';

/*
 * Lenient result shapes. The SDK's own schemas reject a whole tools/list page when one entry is
 * malformed, and its listTools/callTool compile every remote outputSchema with its own ajv. Here
 * a page is read loosely and each entry is judged on its own by the mapping (one bad tool drops
 * one tool, § Discovery).
 */
export const LooseListTools = z.looseObject({ tools: z.array(z.unknown()).default([]), nextCursor: z.string().optional() });
export const LooseCallTool = z.looseObject({
  content: z.array(z.unknown()).default([]),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
});
export const LooseListResources = z.looseObject({ resources: z.array(z.unknown()).default([]), nextCursor: z.string().optional() });
export const LooseReadResource = z.looseObject({ contents: z.array(z.unknown()).default([]) });
export const LooseListPrompts = z.looseObject({ prompts: z.array(z.unknown()).default([]), nextCursor: z.string().optional() });
export const LooseGetPrompt = z.looseObject({ description: z.string().optional(), messages: z.array(z.unknown()).default([]) });

export type LooseCallToolResult = z.infer<typeof LooseCallTool>;
