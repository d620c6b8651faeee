/**
 * The specification's hard gates (§ Hard gates: "These fail the build"), by number, in a few
 * words each: the summary names a gate that did not run by its number and this title.
 */
export const HARD_GATES: Readonly<Record<number, string>> = {
  1: 'every registered ToolSpec passes registration validation',
  2: 'the forced-trust table holds',
  3: 'every non-idempotent builtin sets the effect watermark first',
  4: 'the outcome object is six fields; messages match the table',
  5: 'no external text in message',
  6: 'the import-boundary walk passes',
  7: 'a recorded crash at each of the fourteen pipeline steps recovers as the recovery table says',
  8: 'two concurrent submissions of the same call produce one execution',
  9: 'normalization is stable',
  10: 'mcp.{server}.{name} collides with no builtin domain',
  11: 'an MCP call traverses the same fourteen steps as a builtin call',
  12: 'a server that disconnects mid-call yields tool.server_unreachable',
  13: 'no module outside adapters.mcp imports an MCP SDK type',
  14: 'configuration validation rejects every invalid authentication row',
  15: 'the re-authentication ladder is bounded',
  16: "a stdio server's child receives a constructed environment",
};
