/** One page of the developer docs: `docs/<slug>.md`, served at `/developers/<slug>`. */
export interface DocsPage {
  slug: string;
  /** Link text in the nav and the index. */
  label: string;
  /** One line on the index. */
  summary: string;
}

/** Where the docs are served. The spec fixes `{docs_url}/developers/errors#<code>`, and `DOCS_URL` defaults to the service. */
export const DOCS_BASE = '/developers';

/**
 * The provider-facing pages, in reading order: the nav of every page and the index. Internal pages (decisions,
 * performance, testing, security) are not served: they describe how the service is built, not how to use it.
 */
export const PROVIDER_PAGES: DocsPage[] = [
  { slug: 'quickstart', label: 'Quickstart', summary: 'From sign-up to a published package that a user installs, with curl.' },
  { slug: 'descriptor', label: 'Capability descriptors', summary: 'Every field of a package, a version and a capability.' },
  { slug: 'runtime-bridge', label: 'Runtime bridge', summary: 'How the service calls your runtime: modes, retries, confirmations.' },
  { slug: 'runtime-auth', label: 'Runtime authentication', summary: 'Verifying the runtime tokens on the calls your runtime receives.' },
  {
    slug: 'examples',
    label: 'Example runtimes',
    summary: 'A complete package and a tested runtime for each mode: state, action, history, realtime, webhook.',
  },
  { slug: 'components', label: 'Components', summary: 'How the app draws your data: each component’s fields, formats and placements.' },
  { slug: 'console-guide', label: 'Console', summary: 'The console’s lifecycle checklist, the “call it” panel and error lists.' },
  { slug: 'conformance', label: 'Conformance', summary: 'The six dimensions a version is scored in before it can be listed.' },
  { slug: 'versions', label: 'Versions and installs', summary: 'How a newly published version reaches existing installs.' },
  { slug: 'webhooks', label: 'Webhooks', summary: 'Outbound events, delivery, retries, secrets, and inbound events.' },
  { slug: 'webhook-signatures', label: 'Webhook signatures', summary: 'Verifying our signatures in Node and Python.' },
  { slug: 'events-api', label: 'Events API', summary: 'Your app’s events for 30 days, to reconcile and catch up by event id.' },
  { slug: 'execution-log', label: 'Execution log', summary: 'Every capability call by request id: phases, attempts and errors.' },
  { slug: 'metrics', label: 'Metrics', summary: 'Calls, error rates and p50/p95 latency per capability; webhook delivery success.' },
  { slug: 'events', label: 'Real-time events', summary: 'The WebSocket gateway and its event reference.' },
  { slug: 'errors', label: 'Errors', summary: 'Every problem type and user API error code: meaning and how to retry.' },
];

/** Served and listed on the index under "For operators", but not in the providers' nav. */
export const OPERATOR_PAGES: DocsPage[] = [
  { slug: 'operations', label: 'Operations', summary: 'Processes, configuration, scaling and maintenance of a deployment.' },
];
