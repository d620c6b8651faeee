import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { renderOutcome } from '@veetbot/domain';
import type { BridgeCall, BridgeCallHandler, BridgeOutcome } from '@veetbot/ports';

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** A handler standing in for the pipeline: records every call, answers a rendered ToolResultItem. */
export function recordingHandler(): { handler: BridgeCallHandler; calls: BridgeCall[] } {
  const calls: BridgeCall[] = [];
  const handler: BridgeCallHandler = async (call) => {
    calls.push(call);
    const item: BridgeOutcome = {
      call_id: call.callId,
      tool_name: call.toolName,
      outcome: renderOutcome({ action: call.toolName, reasonCode: 'tool.ok' }),
      content: [{ type: 'text', text: JSON.stringify(call.arguments), trust: 'internal_tool' }],
      structured: { echo: call.arguments as unknown, ordinal: call.ordinal },
      trust: 'internal_tool',
      truncated: false,
      artifact_id: null,
    };
    return item;
  };
  return { handler, calls };
}

export interface Exchange {
  /** Every frame the bridge sent, parsed. */
  readonly frames: Record<string, unknown>[];
  /** Whether the bridge ended the connection. */
  readonly closed: boolean;
}

/**
 * Connect from the host (root may open the 0600 socket), send raw bytes, and read frames until
 * `expect` frames arrived or the bridge closed the connection.
 */
export function exchange(socketPath: string, payload: string | Buffer, expect: number, timeoutMs = 5_000): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    const frames: Record<string, unknown>[] = [];
    let buffer = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ frames, closed });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('error', (error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(error);
    });
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      buffer += text;
      let newline = buffer.indexOf('\n');
      while (newline !== -1) {
        frames.push(JSON.parse(buffer.slice(0, newline)) as Record<string, unknown>);
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf('\n');
      }
      if (frames.length >= expect) finish(false);
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.write(payload);
  });
}

export const line = (value: unknown): string => `${JSON.stringify(value)}\n`;
