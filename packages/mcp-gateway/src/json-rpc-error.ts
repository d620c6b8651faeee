/**
 * A JSON-RPC error as the whole HTTP answer (the Streamable HTTP transport's own shape for
 * refusals before any message is handled: a bad key, an unknown session, a full gateway).
 * `data.code` is the stable veetbot code, the same one the REST API would give.
 */
export function jsonRpcErrorResponse(
  status: number,
  rpcCode: number,
  code: string,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: rpcCode, message, data: { code } } }), {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers },
  });
}
