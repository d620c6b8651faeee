/** What mcp-http-long-session-child.ts prints and mcp-http-long-session.bench.ts reads. */

export interface Reading {
  /** Measured calls made when the reading was taken (0: after the warm-up). */
  readonly calls: number;
  readonly heapUsedBytes: number;
  readonly rssBytes: number;
  readonly externalBytes: number;
  /** 'abort' listeners now on each transport's signal, by server id. */
  readonly abortListeners: Record<string, number>;
  /** TCP sockets this process holds (the database pool's and the HTTP connections'). */
  readonly tcpSockets: number;
  /** Seconds of calls since the previous reading (the readings' own GC time excluded). */
  readonly seconds: number;
}

export interface ChildReport {
  readonly driver: string;
  readonly serverUrl: string;
  readonly warmup: number;
  readonly warmupSeconds: number;
  readonly calls: number;
  readonly callers: number;
  readonly checkpoint: number;
  readonly transportsStarted: number;
  readonly readings: Reading[];
  readonly peakDuringCalls: Record<string, number>;
  readonly warningsDuringCalls: number;
  readonly cancelled: {
    readonly calls: number;
    readonly requestTimeoutSeconds: number;
    readonly operationSeconds: number;
    readonly statuses: Record<string, number>;
    readonly reading: Reading;
    readonly afterMore: Reading;
  };
  readonly warnings: Array<{ text: string; count: number }>;
}
