#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { usePrivateUmask } from '@veetbot/composition';
import { TrustLevel, VeetbotError } from '@veetbot/domain';
import { executeToolCall, parseToolCallRequest, type PipelineResult } from '@veetbot/executor';
import { composeCli } from './compose';
import { MCP_CHECK_USAGE, runMcpCheck } from './mcp-check';
import { runOperatorCommand } from './operator';
import { runSecretsReencrypt, SECRETS_REENCRYPT_USAGE } from './secrets-reencrypt';
import { withCliTracing } from './cli-tracing';

const USAGE = `veetbot — the governed tool-execution system

Usage:
  veetbot registry list                     list the registered tools and the pinned set
  veetbot call TOOL --args JSON --dry-run   run a call through pipeline steps 1–7
      [--origin model|runtime]              who built the call (default: model)
      [--context-trust LEVEL,...]           trust labels of the context items (default: user)
  veetbot start                             list the registry and dry-run a sample call
  veetbot mcp check (--url URL | --stdio 'COMMAND ARGS') [...]
                                            connect to an MCP server as the platform would,
                                            print the handshake and mapped names, optionally
                                            --call one tool through the full pipeline
                                            (veetbot mcp check --help for every option)
  veetbot tenant create TENANT              a tenant, in the database the settings name
  veetbot key create --tenant T --scopes A,B [--principal ID]
                                            an API key with exactly these scopes (printed once)
  veetbot key revoke (--key KEY | --tenant T --key-id ID)
                                            (veetbot key --help for the details)
  veetbot secrets reencrypt                 re-seal every tenant secret under the current key
                                            (key rotation; ADR 0017)
`;

function outboxPath(): string {
  return process.env.VEETBOT_OUTBOX_PATH ?? resolve(process.env.VEETBOT_DATA_DIR ?? '.veetbot', 'outbox.log');
}

function printRegistry(): void {
  const { registry, pinned } = composeCli({ outboxPath: outboxPath() });
  const rows = registry
    .list()
    .map((s) => [
      s.name,
      s.version,
      s.kind,
      s.side_effect,
      s.risk,
      s.idempotency,
      s.output_trust,
      pinned.toolNames.includes(s.name) ? 'pinned' : '-',
    ]);
  const header = ['name', 'version', 'kind', 'side_effect', 'risk', 'idempotency', 'output_trust', 'session'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const row of [header, ...rows])
    console.log(
      row
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
  console.log(`\ntool_schema_sha256 ${pinned.toolSchemaSha256}`);
}

function describe(result: PipelineResult): unknown {
  switch (result.kind) {
    case 'concluded':
      return { stage: 'concluded', invocation_status: result.invocationStatus, item: result.item };
    case 'approval_required':
    case 'authorized': {
      const { spec, argumentsHash, canonicalArguments, originTrust, decision } = result.call;
      return {
        stage: result.kind,
        tool: { name: spec.name, version: spec.version },
        canonical_arguments: canonicalArguments,
        arguments_hash: argumentsHash,
        origin_trust: originTrust,
        policy: decision,
      };
    }
  }
}

async function dryRun(
  toolName: string,
  argsJson: string,
  origin: 'model' | 'runtime',
  contextTrust: TrustLevel[],
): Promise<PipelineResult> {
  let args: unknown;
  try {
    args = JSON.parse(argsJson);
  } catch {
    throw new VeetbotError('cli.args_not_json', '--args is not valid JSON.');
  }
  const { deps, principal, agent, pinned } = composeCli({ outboxPath: outboxPath() });
  return executeToolCall(
    deps,
    { agent, pinned },
    parseToolCallRequest({
      tenantId: principal.tenant_id,
      principal,
      sessionId: randomUUID(),
      runId: randomUUID(),
      stepNumber: 1,
      callId: `cli_${randomUUID()}`,
      toolName,
      arguments: args,
      origin,
      contextTrust,
    }),
    { dryRun: true },
  );
}

async function main(argv: string[]): Promise<number> {
  // `mcp check` has its own flags (mcp-check.ts).
  if (argv[0] === 'mcp') {
    if (argv[1] === 'check') {
      return runMcpCheck(argv.slice(2), { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) });
    }
    console.error(MCP_CHECK_USAGE);
    return 2;
  }
  if (argv[0] === 'secrets') {
    if (argv[1] === 'reencrypt' && argv.length === 2)
      return runSecretsReencrypt(process.env, process.cwd(), {
        out: (text) => process.stdout.write(text),
        err: (text) => process.stderr.write(text),
      });
    console.error(SECRETS_REENCRYPT_USAGE);
    return argv.includes('--help') || argv.includes('-h') ? 0 : 2;
  }
  // Operator tooling has its own flags (operator.ts).
  if (argv[0] === 'tenant' || argv[0] === 'key') {
    return runOperatorCommand(argv, { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) });
  }
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      args: { type: 'string', default: '{}' },
      'dry-run': { type: 'boolean', default: false },
      origin: { type: 'string', default: 'model' },
      'context-trust': { type: 'string', default: 'user' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, sub] = positionals;
  if (values.help || command === undefined) {
    console.log(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  if (command === 'registry' && sub === 'list') {
    printRegistry();
    return 0;
  }
  if (command === 'call' && sub !== undefined) {
    if (!values['dry-run']) {
      console.error(
        'veetbot: the CLI runs a call as a dry run only (steps 1–7; add --dry-run). To run it for real, go through the API: `pnpm start`, then open a session and submit a step (README "Walkthrough").',
      );
      return 2;
    }
    const origin = values.origin === 'runtime' ? 'runtime' : 'model';
    const contextTrust = values['context-trust']
      .split(',')
      .filter(Boolean)
      .map((t) => TrustLevel.parse(t.trim()));
    console.log(JSON.stringify(describe(await dryRun(sub, values.args, origin, contextTrust)), null, 2));
    return 0;
  }
  if (command === 'start') {
    printRegistry();
    console.log('\nSample: demo.external_write proposed by a model turn that read untrusted content (dry run, steps 1–7):');
    console.log(
      JSON.stringify(
        describe(await dryRun('demo.external_write', '{"line":"hello from veetbot"}', 'model', ['user', 'external_untrusted'])),
        null,
        2,
      ),
    );
    console.log('\nNext: pnpm veetbot call math.evaluate --args \'{"expression":"2*(3+4)"}\' --dry-run');
    return 0;
  }
  console.error(USAGE);
  return 2;
}

// docs/adr/0054: the data folder's files (PGlite, secrets.key, the outbox) are this user's alone,
// whatever umask the shell handed down — the same umask as every veetbot process.
usePrivateUmask();
withCliTracing(process.argv.slice(2), process.env, () => main(process.argv.slice(2))).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (VeetbotError.isInstance(error)) {
      console.error(`veetbot: ${error.code}: ${error.message}`);
      process.exit(1);
    }
    console.error(error);
    process.exit(1);
  },
);
