/**
 * A stdio server's command line split into words: whitespace separates, single and double
 * quotes group, a backslash escapes the next character outside single quotes. No shell ever
 * sees it (no expansion, no globbing, no variables); null when a quote is left open.
 */
export function splitCommandLine(line: string): string[] | null {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote !== null) {
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"' && i + 1 < line.length) current += line[++i];
      else current += ch;
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (ch === '\\' && i + 1 < line.length) {
      current += line[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (quote !== null) return null;
  if (inWord) words.push(current);
  return words;
}

/** The command and argument vector a stdio configuration names. */
export function stdioCommand(config: {
  readonly endpoint: string;
  readonly args?: readonly string[] | undefined;
}): { command: string; args: string[] } | null {
  if (config.args !== undefined) return config.endpoint.trim() === '' ? null : { command: config.endpoint, args: [...config.args] };
  const words = splitCommandLine(config.endpoint);
  if (words === null || words.length === 0 || words[0] === '') return null;
  return { command: words[0]!, args: words.slice(1) };
}
