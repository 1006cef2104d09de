import { failureFrom, type FieldError } from '@soul-service/api-client';
import {
  DescriptorError,
  describeFailure,
  envelopeProblems,
  isObject,
  jsonBody,
  normaliseCapabilities,
  randomId,
  RuntimeClient,
  SseParser,
  streamEventProblems,
  TestTraffic,
  validatorFor,
  withoutPagingParams,
  type CapabilityDescriptor,
  type CapabilityMode,
  type HttpPort,
  type RuntimeResponse,
  type SseEvent,
} from '@soul-service/rules';
import { CommandError, UsageError, type Command, type CommandContext } from '../command';
import { LocalKey } from '../local-key';
import { VERSION } from '../version';
import { LOCAL_APP_ID } from './conformance';
import { DEFAULT_DESCRIPTOR } from './packages';
import { httpUrlOption, PACKAGE_OPTION, packageId, readJsonFile } from './shared';

/**
 * The longest any tier lets a runtime take and the largest answer any tier accepts (docs/runtime-bridge.md,
 * "Limits"): a local call is not cut short where some app's calls would still be served.
 */
const TIMEOUT_MS = 30_000;
const MAX_BYTES = 5 * 1024 * 1024;
const USER_AGENT = `soul-cli/${VERSION}`;
/** How much of an answer that is not JSON is shown. */
const TEXT_SHOWN = 2_000;

/** What `invoke --url` reports about one call to a runtime. */
export interface RuntimeInvokeReport {
  capability: string;
  mode: CapabilityMode;
  url: string;
  request_id: string;
  app_id: string;
  user_id: string;
  install_id: string;
  idempotency_key?: string;
  status: number;
  duration_ms: number;
  /** The runtime's answer: its JSON, else the start of its text. */
  answer: unknown;
  /** Why the service would refuse this success answer (`500 execution_failed`); empty when it would relay it. */
  problems: string[];
}

/** What `invoke` without `--url` reports: the service's answer to the execute call. */
export interface ServiceInvokeReport {
  capability: string;
  package_id: string;
  install_id?: string;
  user_id?: string;
  request_id: string | null;
  status: number;
  duration_ms: number;
  answer: unknown;
}

function stringOption(context: CommandContext, name: string): string | undefined {
  const value = context.options[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `--params '<json>'` or `--params-file f.json` (likewise `--input`): one JSON object, or nothing given. */
function jsonObjectOption(context: CommandContext, inline: string, file: string): Record<string, unknown> | undefined {
  const text = stringOption(context, inline);
  const path = stringOption(context, file);
  if (text !== undefined && path !== undefined) throw new UsageError(`Give --${inline} or --${file}, not both.`);
  if (path !== undefined) return readJsonFile(path);
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--${inline} is not JSON: ${(error as Error).message}`, `For example --${inline} '{"account":"main"}'`);
  }
  if (!isObject(value)) throw new UsageError(`--${inline} must be a JSON object`, `For example --${inline} '{"account":"main"}'`);
  return value;
}

/** The capability as the descriptor declares it, in the service's stored form; a descriptor the rules refuse names its fields. */
function capabilityFrom(file: string, name: string): CapabilityDescriptor {
  const descriptor = readJsonFile(file);
  let capabilities: CapabilityDescriptor[];
  try {
    capabilities = normaliseCapabilities(descriptor.capabilities);
  } catch (error) {
    if (!(error instanceof DescriptorError)) throw error;
    throw new CommandError(
      error.code,
      `${file}: ${error.detail}`,
      error.errors ?? [{ field: error.field, message: error.detail, code: error.code }],
    );
  }
  const capability = capabilities.find((c) => c.name === name);
  if (!capability) {
    throw new UsageError(
      `${file} has no capability ${JSON.stringify(name)}.`,
      `Capabilities: ${capabilities.map((c) => `${c.name} (${c.type})`).join(', ')}`,
    );
  }
  if (capability.type === 'webhook') {
    throw new UsageError(
      `${name} is a webhook capability: the provider pushes its events (POST /v1/providers/runtime/webhook), nothing calls it.`,
    );
  }
  return capability;
}

/** One field error from a line of the rules' validator, which writes `<JSON pointer or (root)> <ajv message>`. */
function fieldErrorOf(root: string, line: string): FieldError {
  const split = line.indexOf(' must ');
  const at = split >= 0 ? split : line.indexOf(' ');
  const pointer = line.slice(0, at);
  const message = line.slice(at + 1);
  const segments =
    pointer === '(root)'
      ? []
      : pointer
          .split('/')
          .slice(1)
          .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const path = (parts: string[]) => parts.reduce((field, s) => (/^\d+$/.test(s) ? `${field}[${s}]` : `${field}.${s}`), root);
  const required = /^must have required property '(.+)'$/.exec(message);
  if (required) return { field: path([...segments, required[1]]), message: 'is required', code: 'missing_field' };
  return { field: path(segments), message, code: 'invalid_format' };
}

/**
 * The params (state, history) or input (action) against the capability's schema, as the service checks them
 * before it calls a runtime: one error per problem, named as the service names them (`params.account`), missing
 * fields first. History's `limit`, `cursor` and `direction` are always allowed.
 */
export function requestFaults(capability: CapabilityDescriptor, value: Record<string, unknown>): FieldError[] {
  const root = capability.type === 'action' ? 'input' : 'params';
  const own = capability.type === 'history' ? withoutPagingParams(capability, value) : value;
  // ajv reports every failing keyword of a union's members: one line per field and message.
  const faults = new Map<string, FieldError>();
  for (const line of validatorFor(capability.schema)(own).errors) {
    const fault = fieldErrorOf(root, line);
    faults.set(`${fault.field} ${fault.message}`, fault);
  }
  return [...faults.values()].sort((a, b) => Number(b.code === 'missing_field') - Number(a.code === 'missing_field'));
}

/**
 * Why the service would refuse a success answer (docs/runtime-bridge.md, "deliver"): the mode's envelope, then a
 * state's `data` against `responseSchema` (else `schema`), an action's `result` and each history item against a
 * declared `responseSchema`. A degraded answer is passed on without the schema check, as the service does.
 */
export function answerProblems(capability: CapabilityDescriptor, body: unknown, params: Record<string, unknown>): string[] {
  if (isObject(body) && body.status === 'degraded') return [];
  // The rules' envelope check caps history pages at the conformance run's own limit; here the caller chose it.
  const problems = envelopeProblems(capability, body).filter((p) => !p.startsWith('items holds more than'));
  if (!isObject(body) || problems.length > 0) return problems;
  if (capability.type === 'history' && Number.isInteger(params.limit) && (body.items as unknown[]).length > (params.limit as number)) {
    problems.push(`items holds ${(body.items as unknown[]).length} items, more than the requested limit of ${String(params.limit)}`);
  }
  const check = (schema: Record<string, unknown> | undefined, what: string, value: unknown) => {
    if (!schema) return;
    const result = validatorFor(schema)(value);
    if (!result.valid) problems.push(`${what} does not match the capability's schema (${result.errors.slice(0, 3).join(', ')})`);
  };
  if (capability.type === 'state') check(capability.responseSchema ?? capability.schema, 'data', body.data);
  if (capability.type === 'action') check(capability.responseSchema, 'result', body.result);
  if (capability.type === 'history') (body.items as unknown[]).forEach((item, i) => check(capability.responseSchema, `items[${i}]`, item));
  return problems;
}

/** Why the service would refuse a 2xx answer that is no error envelope: its size, its content type, then its content. */
function successProblems(capability: CapabilityDescriptor, response: RuntimeResponse, request: Record<string, unknown>): string[] {
  if (response.oversize) return [`the answer is larger than ${MAX_BYTES} bytes, more than any tier accepts`];
  const body = jsonBody(response);
  if (body === undefined) {
    return [`Content-Type is ${response.headers['content-type'] ?? 'missing'} or the body is not JSON; expected application/json`];
  }
  return answerProblems(capability, body, request);
}

function answerOf(response: RuntimeResponse): unknown {
  const json = jsonBody(response);
  if (json !== undefined) return json;
  return response.text.length > TEXT_SHOWN ? `${response.text.slice(0, TEXT_SHOWN)}…` : response.text;
}

function shown(answer: unknown): string {
  return typeof answer === 'string' ? answer : JSON.stringify(answer, null, 2);
}

/** The runtime error envelope's code and message, when the answer is one. */
function runtimeError(answer: unknown): { code: string; message: string } | null {
  if (!isObject(answer) || answer.status !== 'error' || !isObject(answer.error)) return null;
  return { code: String(answer.error.code), message: String(answer.error.message) };
}

interface RuntimeTarget {
  url: string;
  appId: string;
  traffic: TestTraffic;
  jwksPath: string;
}

/** The developer's machine calling the developer's runtime: no address policy, no redirects, and Ctrl-C stops the call. */
function localHttp(signal: AbortSignal): Pick<HttpPort, 'fetch'> {
  return {
    fetch: (url, init) =>
      fetch(url, { ...init, redirect: 'manual', signal: init.signal ? AbortSignal.any([init.signal, signal]) : signal }),
  };
}

function refusedTokenHint(target: RuntimeTarget): string {
  return `The runtime refused the call's token: start it with SOUL_LOCAL_JWKS=${target.jwksPath} and SOUL_APP_ID=${target.appId} (outside production), so it trusts this CLI's local key for test traffic.`;
}

/** `POST <url>/capabilities/<name>/execute` with the headers and body the service sends in the capability's mode. */
async function executeOnRuntime(
  context: CommandContext,
  target: RuntimeTarget,
  capability: CapabilityDescriptor,
  request: Record<string, unknown>,
): Promise<void> {
  const url = `${target.url}/capabilities/${encodeURIComponent(capability.name)}/execute`;
  const requestId = randomId('req');
  const { userId, installId } = target.traffic;
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json',
    'User-Agent': USER_AGENT,
    ...(await target.traffic.headers(requestId)),
  };
  let idempotencyKey: string | undefined;
  let body: Record<string, unknown>;
  if (capability.type === 'action') {
    idempotencyKey = stringOption(context, 'idempotency-key') ?? randomId('idem');
    headers['X-Service-Idempotency-Key'] = idempotencyKey;
    // The service calls an action once its user confirmed it, naming that confirmation.
    body = { capability: capability.name, mode: 'action', input: request, context: { userId, confirmationId: randomId('act') } };
  } else {
    if (capability.type === 'state') headers['X-Service-User-Id'] = userId;
    body = {
      capability: capability.name,
      mode: capability.type,
      params: request,
      context: { userId, installId, locale: 'en', timezone: 'UTC' },
    };
  }
  const client = new RuntimeClient({ timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES, http: localHttp(context.io.signal) });
  const exchange = await client.send(`${capability.name} execute`, url, { method: 'POST', headers, body: JSON.stringify(body) });
  if (!exchange.response) {
    if (context.io.signal.aborted) throw new CommandError('interrupted', `Stopped before ${url} answered.`);
    const failure = exchange.failure!;
    throw new CommandError(failure.kind === 'timeout' ? 'capability_timeout' : 'runtime_unavailable', failure.detail);
  }
  const response = exchange.response;
  const answer = answerOf(response);
  const succeeded = response.status >= 200 && response.status < 300 && runtimeError(answer) === null;
  const problems = succeeded ? successProblems(capability, response, request) : [];
  const report: RuntimeInvokeReport = {
    capability: capability.name,
    mode: capability.type,
    url,
    request_id: requestId,
    app_id: target.appId,
    user_id: userId,
    install_id: installId,
    ...(idempotencyKey ? { idempotency_key: idempotencyKey } : {}),
    status: response.status,
    duration_ms: Math.round(exchange.durationMs),
    answer,
    problems,
  };
  const lines = [
    `${capability.name} (${capability.type}) → ${response.status} in ${report.duration_ms} ms (request ${requestId}${idempotencyKey ? `, idempotency key ${idempotencyKey}` : ''})`,
    shown(answer),
    ...problems.map((problem) => `  ✗ ${problem}`),
  ];
  if (isObject(answer) && answer.status === 'degraded') lines.push('Degraded: the service passes it on with degraded: true.');
  context.out.result(report, lines);
  if (!succeeded) {
    const error = runtimeError(answer);
    const what = error ? `${error.code}: ${error.message}` : (response.headers['content-type'] ?? 'no content type');
    const hint = response.status === 401 ? ` ${refusedTokenHint(target)}` : '';
    throw new CommandError('runtime_error', `The runtime answered ${response.status} ${what}.${hint}`);
  }
  if (problems.length > 0) {
    throw new CommandError('invalid_answer', `The service would refuse this answer (500 execution_failed): ${problems.join('; ')}.`);
  }
}

function maxEventsFrom(context: CommandContext): number | undefined {
  const given = stringOption(context, 'max-events');
  if (given === undefined) return undefined;
  const n = Number(given);
  if (!Number.isInteger(n) || n < 1) throw new UsageError('--max-events is a number of data events, 1 or more');
  return n;
}

function eventLine(event: SseEvent, receivedAt: string, problems: string[]): string {
  return [`${receivedAt}  ${event.event.padEnd(9)}  ${event.data}`, ...problems.map((p) => `  ✗ ${p}`)].join('\n');
}

/**
 * `GET <url>/capabilities/<name>/stream` as the service's realtime supervisor opens it, printing each event as it
 * arrives until Ctrl-C, `--max-events` data events, or the runtime ends the stream.
 */
async function streamFromRuntime(context: CommandContext, target: RuntimeTarget, capability: CapabilityDescriptor): Promise<void> {
  const url = `${target.url}/capabilities/${encodeURIComponent(capability.name)}/stream`;
  const maxEvents = maxEventsFrom(context);
  const requestId = randomId('req');
  const headers = { Accept: 'text/event-stream', 'User-Agent': USER_AGENT, ...(await target.traffic.headers(requestId)) };
  const controller = new AbortController();
  const stop = () => controller.abort();
  context.io.signal.addEventListener('abort', stop, { once: true });
  // The time limit covers the answer's headers only: a stream is long-lived.
  let timedOut = false;
  const headerTimer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, TIMEOUT_MS);
  const started = performance.now();
  let dataEvents = 0;
  let broken = 0;
  try {
    let response: Response;
    try {
      response = await fetch(url, { headers, signal: controller.signal, redirect: 'manual' });
    } catch (error) {
      if (context.io.signal.aborted) return;
      if (timedOut) throw new CommandError('capability_timeout', `no response headers from ${url} within ${TIMEOUT_MS / 1000} s`);
      throw new CommandError('runtime_unavailable', describeFailure(error, url, TIMEOUT_MS).detail);
    } finally {
      clearTimeout(headerTimer);
    }
    const durationMs = Math.round(performance.now() - started);
    const contentType = response.headers.get('content-type') ?? '';
    if (response.status !== 200 || !/^text\/event-stream/i.test(contentType)) {
      const text = await response.text().catch(() => '');
      let answer: unknown = text.length > TEXT_SHOWN ? `${text.slice(0, TEXT_SHOWN)}…` : text;
      try {
        answer = JSON.parse(text);
      } catch {
        // Not JSON: shown as text.
      }
      context.out.result(
        {
          capability: capability.name,
          mode: capability.type,
          url,
          request_id: requestId,
          status: response.status,
          duration_ms: durationMs,
          answer,
        },
        [`${capability.name} (realtime) → ${response.status} ${contentType} in ${durationMs} ms (request ${requestId})`, shown(answer)],
      );
      const error = runtimeError(answer);
      const hint = response.status === 401 ? ` ${refusedTokenHint(target)}` : '';
      throw new CommandError(
        'runtime_error',
        `The stream answered ${response.status} ${error ? `${error.code}: ${error.message}` : contentType || 'no content type'}; expected 200 text/event-stream.${hint}`,
      );
    }
    context.out.note(`Streaming ${capability.name} from ${url} (opened in ${durationMs} ms, request ${requestId}). Ctrl-C to stop.`);
    const parser = new SseParser();
    const decoder = new TextDecoder();
    const reader = response.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    try {
      while (maxEvents === undefined || dataEvents < maxEvents) {
        const chunk = await reader.read();
        if (chunk.done) break;
        for (const event of parser.push(decoder.decode(chunk.value, { stream: true }))) {
          const receivedAt = new Date().toISOString();
          const problems = streamEventProblems(capability, [event]);
          if (problems.length > 0) broken += 1;
          let data: unknown = event.data;
          try {
            data = JSON.parse(event.data);
          } catch {
            // Shown as sent; the problems say it is not JSON.
          }
          context.out.item(
            { event: event.event, data, received_at: receivedAt, ...(problems.length ? { problems } : {}) },
            eventLine(event, receivedAt, problems),
          );
          if (event.event === 'data') dataEvents += 1;
          if (maxEvents !== undefined && dataEvents >= maxEvents) break;
        }
      }
      if (!context.io.signal.aborted && (maxEvents === undefined || dataEvents < maxEvents)) {
        context.out.note('The runtime ended the stream (the service would open it again).');
      }
    } catch {
      // Ctrl-C, or the runtime dropped the connection: what arrived was shown.
      if (!context.io.signal.aborted) context.out.note('The connection to the runtime was lost (the service would open it again).');
    } finally {
      controller.abort();
      await reader.cancel().catch(() => undefined);
    }
  } finally {
    clearTimeout(headerTimer);
    context.io.signal.removeEventListener('abort', stop);
  }
  if (broken > 0) {
    throw new CommandError(
      'invalid_event',
      `${broken} event(s) break the realtime contract (see above); the service would not relay them.`,
    );
  }
}

/**
 * Without `--url`: the published package through the service. A provider's app token with
 * `capabilities:execute` may execute its own package's capabilities for one of its installs (naming the install
 * or its user), as an app acting for a user does; a console token may not.
 */
async function invokeThroughService(context: CommandContext, name: string): Promise<void> {
  for (const local of ['descriptor', 'app', 'max-events']) {
    if (stringOption(context, local) !== undefined) throw new UsageError(`--${local} is for a runtime on this machine: pass --url too.`);
  }
  const pkg = packageId(context);
  const install = stringOption(context, 'install');
  const user = stringOption(context, 'user');
  if (install === undefined && user === undefined) {
    throw new UsageError(
      'Which install? The service runs a capability for one install of the package.',
      'Pass --install <inst_id> or --user <usr_id> (with an app token holding capabilities:execute), or --url <runtime> to call a runtime on this machine.',
    );
  }
  if (install !== undefined && user !== undefined) throw new UsageError('Give --install or --user, not both.');
  const params = jsonObjectOption(context, 'params', 'params-file');
  const input = jsonObjectOption(context, 'input', 'input-file');
  const idempotencyKey = stringOption(context, 'idempotency-key');
  const started = performance.now();
  const { data, error, response } = await context.api().POST('/v1/providers/packages/{package_id}/capabilities/{capability_name}/execute', {
    params: { path: { package_id: pkg, capability_name: name } },
    body: {
      ...(install !== undefined ? { installId: install } : { userId: user }),
      ...(params ? { params } : {}),
      ...(input ? { input } : {}),
      ...(idempotencyKey ? { idempotencyKey } : {}),
    },
  });
  const durationMs = Math.round(performance.now() - started);
  if (!response.ok) throw failureFrom(response.status, error ?? null, response.headers, response.statusText);
  const requestId = response.headers.get('x-service-request-id');
  const report: ServiceInvokeReport = {
    capability: name,
    package_id: pkg,
    ...(install !== undefined ? { install_id: install } : { user_id: user }),
    request_id: requestId,
    status: response.status,
    duration_ms: durationMs,
    answer: data,
  };
  const lines = [
    `${name} of ${pkg} through the service → ${response.status} in ${durationMs} ms (request ${requestId ?? 'unknown'})`,
    shown(data),
  ];
  if (data?.status === 'pending_confirmation') {
    lines.push('The install’s user approves or declines it (GET /v1/actions/pending); the runtime is called once they approve.');
  }
  if (data?.status === 'subscribed') {
    lines.push(
      'Subscribed: the service holds the stream and relays its events to the user; `soul invoke --url` reads a runtime’s stream here.',
    );
  }
  context.out.result(report, lines);
}

export const invoke: Command = {
  name: 'invoke',
  summary:
    'Call a capability: on a runtime on this machine exactly as the service does (--url), or the published package through the service',
  args: '<capability>',
  minArgs: 1,
  maxArgs: 1,
  options: {
    url: {
      type: 'string',
      value: '<url>',
      description: 'Call the runtime at this base URL (for example http://localhost:8787) with test traffic',
    },
    descriptor: {
      type: 'string',
      value: '<file>',
      description: `With --url: the descriptor that declares the capability (default ${DEFAULT_DESCRIPTOR})`,
    },
    params: { type: 'string', value: '<json>', description: 'The params of a state or history capability, a JSON object' },
    'params-file': { type: 'string', value: '<file>', description: 'The params from a JSON file' },
    input: { type: 'string', value: '<json>', description: 'The input of an action, a JSON object' },
    'input-file': { type: 'string', value: '<file>', description: 'The input from a JSON file' },
    'idempotency-key': {
      type: 'string',
      value: '<key>',
      description: 'An action’s idempotency key (default with --url: a fresh one per call; without: the service derives one)',
    },
    app: {
      type: 'string',
      value: '<app_id>',
      description: `With --url: the runtime’s app id, the token’s audience (default $SOUL_APP_ID, else ${LOCAL_APP_ID})`,
    },
    'max-events': { type: 'string', value: '<n>', description: 'With --url, realtime: stop after n data events (default: until Ctrl-C)' },
    package: { ...PACKAGE_OPTION, description: 'Without --url: the published package (default $SOUL_PACKAGE_ID)' },
    install: { type: 'string', value: '<inst_id>', description: 'Without --url: the install to run it for (app token)' },
    user: { type: 'string', value: '<usr_id>', description: 'Without --url: the user whose install to run it for (app token)' },
  },
  examples: [
    `soul invoke balance --url http://localhost:8787 --params '{"account":"main"}'`,
    'soul invoke transfer --url http://localhost:8787 --input-file transfer.json --idempotency-key idem_retry_1',
    'soul invoke ticker --url http://localhost:8787 --max-events 3 --json',
    'SOUL_TOKEN=<app token> soul invoke balance --package pkg_123 --install inst_123',
  ],
  async run(context) {
    const name = context.args[0];
    const given = stringOption(context, 'url');
    if (given === undefined) return invokeThroughService(context, name);
    for (const remote of ['install', 'user', 'package']) {
      if (stringOption(context, remote) !== undefined) {
        throw new UsageError(
          `--${remote} is for a call through the service: leave out --url.`,
          'With --url the call is test traffic for a synthetic install.',
        );
      }
    }
    const url = httpUrlOption(given, '--url', 'http://localhost:8787', { base: true });
    const capability = capabilityFrom(stringOption(context, 'descriptor') ?? DEFAULT_DESCRIPTOR, name);
    const appId = stringOption(context, 'app') ?? (context.io.env.SOUL_APP_ID || LOCAL_APP_ID);
    if (!/^app_\w+$/.test(appId)) throw new UsageError(`--app ${JSON.stringify(appId)} is not an app id (app_…)`);
    const params = jsonObjectOption(context, 'params', 'params-file');
    const input = jsonObjectOption(context, 'input', 'input-file');
    if (capability.type === 'action' && params) throw new UsageError(`${name} is an action: give its input with --input or --input-file.`);
    if (capability.type !== 'action' && input) {
      throw new UsageError(
        `${name} is a ${capability.type} capability: give ${capability.type === 'realtime' ? 'no input' : 'its params with --params'}.`,
      );
    }
    if (capability.type === 'realtime' && params)
      throw new UsageError(`${name} is a realtime capability: the service sends no params to a stream.`);
    if (capability.type !== 'realtime' && stringOption(context, 'max-events') !== undefined) {
      throw new UsageError('--max-events is for realtime capabilities.');
    }
    if (capability.type !== 'action' && stringOption(context, 'idempotency-key') !== undefined) {
      throw new UsageError('--idempotency-key is for actions.');
    }
    const { key, jwksPath } = await LocalKey.load(context.io.env);
    const target: RuntimeTarget = { url, appId, traffic: new TestTraffic(key, appId), jwksPath };
    if (capability.type === 'realtime') return streamFromRuntime(context, target, capability);
    const request = (capability.type === 'action' ? input : params) ?? {};
    // Refused here as the service refuses it (400, before any runtime call), field by field.
    const faults = requestFaults(capability, request);
    if (faults.length > 0) {
      throw new CommandError(faults[0].code!, `${faults[0].field} ${faults[0].message} (capability ${name} schema)`, faults);
    }
    return executeOnRuntime(context, target, capability, request);
  },
};
