/**
 * The web domain's search provider (§ Partition: "web holds the read-only web.search and
 * web.fetch capabilities"; docs/adr/0078). A provider is something the operator configures
 * (an API and its key); the tenant never names one. Without one, web.search is not registered,
 * so no session can pin a tool that cannot run.
 */
export interface WebSearchQuery {
  /** The model's query, already bounded by web.search's input schema. */
  readonly query: string;
  /** At most this many hits; the tool bounds what comes back again. */
  readonly maxResults: number;
}

/** One hit. Every field is remote text (EXTERNAL_UNTRUSTED); the tool bounds each. */
export interface WebSearchHit {
  readonly title: string;
  readonly url: string;
  readonly snippet: string;
}

export interface WebSearchProvider {
  /** Operator-facing name (logs, the ADR's registration rule); never shown to the model. */
  readonly name: string;
  /**
   * Search. A failure throws; web.search reports it as tool.upstream_error.web_search (the
   * provider's text is never a message). `signal` is the call's cancellation and deadline.
   */
  search(query: WebSearchQuery, signal: AbortSignal): Promise<readonly WebSearchHit[]>;
}
