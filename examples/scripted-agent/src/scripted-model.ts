import type { SubmittedCall } from '@veetbot/client';

/**
 * The "model": a fixed list of turns, each the tool calls a model would emit in that turn. No
 * model service is involved; the point is the loop around it (submit, approve, read artifacts).
 */
export interface ScriptedTurn {
  /** What the turn shows, printed before it is submitted. */
  readonly title: string;
  readonly calls: readonly SubmittedCall[];
}

/** Larger than the 4,096-byte inline limit (output.inline_maximum_bytes): its read is truncated. */
export const BIG_FILE_TEXT = Array.from(
  { length: 160 },
  (_, i) => `line ${String(i).padStart(3, '0')}: the quick brown fox jumps over the lazy dog`,
).join('\n');

export const SCRIPT: readonly ScriptedTurn[] = [
  {
    title: 'a read-only call',
    calls: [{ call_id: 'call_math', tool_name: 'math.evaluate', arguments: { expression: '2 * (3 + 4) ^ 2' }, context_trust: ['user'] }],
  },
  {
    title: 'write a note, then read it back',
    calls: [
      {
        call_id: 'call_write',
        tool_name: 'workspace.write_text',
        arguments: { path: 'notes/hello.txt', text: 'hello from the scripted agent' },
        context_trust: ['user'],
      },
      { call_id: 'call_read', tool_name: 'workspace.read_text', arguments: { path: 'notes/hello.txt' }, context_trust: ['user'] },
    ],
  },
  {
    // Untrusted text (e.g. a web page) is in the context that produced this call: policy asks a
    // person before an external write (§ Approvals).
    title: 'an external write after reading untrusted text (needs approval)',
    calls: [
      {
        call_id: 'call_send',
        tool_name: 'demo.external_write',
        arguments: { line: 'summary sent by the scripted agent' },
        context_trust: ['user', 'external_untrusted'],
      },
    ],
  },
  {
    title: 'write a big file',
    calls: [
      {
        call_id: 'call_big_write',
        tool_name: 'workspace.write_text',
        arguments: { path: 'big.txt', text: BIG_FILE_TEXT },
        context_trust: ['user'],
      },
    ],
  },
  {
    title: 'read the big file (truncated; the whole result is an artifact)',
    calls: [{ call_id: 'call_big_read', tool_name: 'workspace.read_text', arguments: { path: 'big.txt' }, context_trust: ['user'] }],
  },
];
