/**
 * A scripted server lives exactly as long as the test that started it: SIGTERM, SIGINT, or its
 * stdin closing (the harness holds stdin open, so a test process that dies — even killed
 * without cleanup — ends the server too, and no scripted server outlives it as an orphan).
 */
export function exitWithHarness(close: () => void): void {
  const stop = (): void => {
    close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.resume();
}
