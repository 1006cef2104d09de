import { isObject } from '../json';
import { CapabilityDescriptor } from '../descriptors/capability-descriptor';
import { validatorFor } from '../descriptors/schema-checker';
import { describeExchange, Exchange, isJsonType, jsonBody, SseEvent } from './runtime-exchange';

/**
 * How the suite judges what a runtime answered (spec: Provider runtime contract,
 * Runtime error envelope). Pure functions over recorded exchanges.
 */

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const isTimestamp = (v: unknown) => typeof v === 'string' && ISO_TIMESTAMP.test(v) && !Number.isNaN(Date.parse(v));

export const HISTORY_PAGE_LIMIT = 10;

export type Executable = CapabilityDescriptor & { type: 'state' | 'action' | 'history' };
export const isExecutable = (c: CapabilityDescriptor): c is Executable => c.type === 'state' || c.type === 'action' || c.type === 'history';

export interface ExecuteResult {
  capability: Executable;
  exchange: Exchange;
  /** Why the call did not give a 200 JSON answer; null when it did. */
  transport: string | null;
  body: unknown;
  idempotencyKey?: string;
  request: Record<string, unknown>;
}

export interface Item {
  ok: boolean;
  why?: string;
}

export function historyLimit(capability: CapabilityDescriptor): number {
  const limit = isObject(capability.schema.properties) ? capability.schema.properties.limit : undefined;
  return isObject(limit) && typeof limit.maximum === 'number' ? Math.min(HISTORY_PAGE_LIMIT, limit.maximum) : HISTORY_PAGE_LIMIT;
}

export function transportProblem(exchange: Exchange, body: unknown): string | null {
  if (exchange.failure) return exchange.failure.detail;
  const response = exchange.response!;
  if (response.oversize) return `response larger than 256 KB`;
  if (response.status !== 200) {
    const error =
      isObject(body) && isObject(body.error) ? ` (${String(body.error.code)}: ${String(body.error.message).slice(0, 200)})` : '';
    return `${describeExchange(exchange)}${error}, expected 200`;
  }
  if (!isJsonType(response)) return `Content-Type is ${response.headers['content-type'] ?? 'missing'}, expected application/json`;
  if (body === undefined) return 'the body is not valid JSON';
  return null;
}

/** Why an execute call is not a usable success answer (transport, status, content type, envelope), or null. */
export function executeProblem(execution: ExecuteResult): string | null {
  if (execution.transport !== null) return execution.transport;
  const problems = envelopeProblems(execution.capability, execution.body);
  return problems.length === 0 ? null : `answered 200 but not with the success envelope: ${problems.join(', ')}`;
}

/** What is wrong with a success envelope (spec: Provider runtime contract, success responses). */
export function envelopeProblems(capability: CapabilityDescriptor, body: unknown): string[] {
  if (!isObject(body)) return ['the body is not a JSON object'];
  const problems: string[] = [];
  if (body.status !== 'ok') problems.push(`status is ${JSON.stringify(body.status)}, expected "ok"`);
  if (capability.type === 'state') {
    if (!isObject(body.data)) problems.push('data must be an object');
    if (!Number.isInteger(body.ttl) || (body.ttl as number) < 0) problems.push('ttl must be a non-negative integer');
    const metadata = body.metadata;
    if (!isObject(metadata)) problems.push('metadata must be an object with source and fetchedAt');
    else {
      if (typeof metadata.source !== 'string' || metadata.source === '') problems.push('metadata.source must be a non-empty string');
      if (!isTimestamp(metadata.fetchedAt)) problems.push('metadata.fetchedAt must be an ISO 8601 timestamp');
    }
  } else if (capability.type === 'action') {
    if (!isObject(body.result)) problems.push('result must be an object');
    if (typeof body.message !== 'string' || body.message.trim() === '') problems.push('message must be a human-readable string');
  } else if (capability.type === 'history') {
    if (!Array.isArray(body.items) || !body.items.every(isObject)) problems.push('items must be an array of objects');
    else if (body.items.length > historyLimit(capability))
      problems.push(`items holds more than the requested limit of ${historyLimit(capability)}`);
    const cursor = body.cursor;
    if (!isObject(cursor) || typeof cursor.hasMore !== 'boolean') problems.push('cursor must be an object with hasMore (boolean) and next');
    else if (
      cursor.hasMore ? typeof cursor.next !== 'string' || cursor.next === '' : !(typeof cursor.next === 'string' || cursor.next === null)
    ) {
      problems.push('cursor.next must be a string (non-empty while hasMore is true)');
    }
    if (!Number.isInteger(body.totalCount) || (body.totalCount as number) < 0) problems.push('totalCount must be a non-negative integer');
  }
  return problems;
}

export function responseSchemaItem(execution: ExecuteResult): Item {
  const { capability, body } = execution;
  const name = capability.name;
  if (executeProblem(execution) !== null || !isObject(body))
    return { ok: false, why: `${name}: no success answer to validate (see contracts.execute)` };
  const validate = validatorFor(capability.responseSchema!);
  const values: Array<{ what: string; value: unknown }> =
    capability.type === 'state'
      ? [{ what: 'data', value: body.data }]
      : capability.type === 'action'
        ? [{ what: 'result', value: body.result }]
        : (Array.isArray(body.items) ? (body.items as unknown[]) : [undefined]).map((value, i) => ({ what: `items[${i}]`, value }));
  for (const { what, value } of values) {
    const result = validate(value);
    if (!result.valid)
      return { ok: false, why: `${name}: ${what} does not match responseSchema (${result.errors.slice(0, 3).join(', ')})` };
  }
  return { ok: true };
}

export function streamEventProblems(capability: CapabilityDescriptor, events: SseEvent[]): string[] {
  const problems: string[] = [];
  const validate = capability.responseSchema ? validatorFor(capability.responseSchema) : undefined;
  for (const event of events) {
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      problems.push(`a ${event.event} event's data line is not JSON`);
      continue;
    }
    if (event.event === 'heartbeat' && !(isObject(data) && isTimestamp(data.ts)))
      problems.push('a heartbeat lacks ts (ISO 8601 timestamp)');
    if (event.event === 'data') {
      if (!isObject(data)) problems.push('a data event is not a JSON object');
      else if (validate) {
        const result = validate(data);
        if (!result.valid) problems.push(`a data event does not match responseSchema (${result.errors.slice(0, 2).join(', ')})`);
      }
    }
  }
  return [...new Set(problems)];
}

/** What is wrong with a runtime error answer (spec: Runtime error envelope), or null. */
export function errorEnvelopeProblem(exchange: Exchange, status: number, code: string, retryable: boolean): string | null {
  if (exchange.failure) return exchange.failure.detail;
  const response = exchange.response!;
  if (response.status !== status) return `${describeExchange(exchange)}, expected ${status} ${code}`;
  const body = jsonBody(response);
  if (!isObject(body)) return `answered ${status} without an application/json error envelope`;
  const problems: string[] = [];
  if (body.status !== 'error') problems.push(`status is ${JSON.stringify(body.status)}, expected "error"`);
  const error = body.error;
  if (!isObject(error)) problems.push('error object missing');
  else {
    if (error.code !== code) problems.push(`error.code is ${JSON.stringify(error.code)}, expected "${code}"`);
    if (typeof error.message !== 'string' || error.message.trim() === '') problems.push('error.message must be a non-empty string');
    if (error.retryable !== retryable) problems.push(`error.retryable must be ${retryable}`);
    if (error.retryAfter !== undefined && !(Number.isInteger(error.retryAfter) && (error.retryAfter as number) >= 0)) {
      problems.push('error.retryAfter must be an integer number of seconds');
    }
  }
  return problems.length === 0 ? null : `answered ${status} but ${problems.join(', ')}`;
}
