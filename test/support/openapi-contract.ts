import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { envelopeFor } from '../../src/common/errors/envelope';

/**
 * Checks HTTP responses against the OpenAPI document the server itself serves at /docs/openapi.json:
 * the status is documented for the operation, required headers are present, and a JSON body matches
 * the documented schema. The document is fetched once per server origin.
 */

type Json = Record<string, unknown>;
interface Operation {
  operationId?: string;
  responses: Record<string, Json>;
}
interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  literalSegments: number;
  operation: Operation;
}

export interface ContractResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Raw text of the body (supertest's `text`), when it was text. */
  text?: string;
  /** Parsed body (supertest's `body`). */
  body?: unknown;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

export class OpenApiContract {
  private readonly routes: Route[] = [];
  private readonly ajv: Ajv;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: Json) {
    this.ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(this.ajv);
    const components = toJsonSchema(document.components ?? {});
    this.ajv.addSchema({ $id: 'openapi', components });
    for (const [template, item] of Object.entries((document.paths as Record<string, Json>) ?? {})) {
      for (const method of METHODS) {
        const operation = item[method] as Operation | undefined;
        if (!operation) continue;
        const segments = template.split('/');
        const pattern = new RegExp(
          '^' + segments.map((s) => (/^\{[^}]+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/') + '/?$',
        );
        this.routes.push({ method, template, pattern, literalSegments: segments.filter((s) => !s.startsWith('{')).length, operation });
      }
    }
    // The most literal template wins (`/v1/installs/mine` before `/v1/installs/{id}`).
    this.routes.sort((a, b) => b.literalSegments - a.literalSegments);
  }

  /** The documented operation for a request, or undefined. */
  route(method: string, path: string): Route | undefined {
    const m = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    return this.routes.find((r) => r.method === m && r.pattern.test(path));
  }

  /** Problems with a response (empty when it matches the document). */
  check(method: string, path: string, response: ContractResponse): string[] {
    const route = this.route(method, path);
    if (!route) {
      // A path or method the service does not route is answered 404 (405) in the envelope of its area.
      if (response.status !== 404 && response.status !== 405)
        return [`${method.toUpperCase()} ${path}: no operation in the OpenAPI document`];
      const envelope = envelopeFor(path) === 'problem' ? 'ProblemDetailsDto' : 'ApiErrorDto';
      const validate = this.validators.get(envelope) ?? this.ajv.compile({ $ref: `openapi#/components/schemas/${envelope}` });
      this.validators.set(envelope, validate);
      return validate(parseBody(response))
        ? []
        : (validate.errors ?? []).map(
            (e) =>
              `${method.toUpperCase()} ${path} (unrouted) → ${response.status}: body${e.instancePath} ${e.message ?? 'invalid'} (schema #/components/schemas/${envelope}${e.schemaPath.replace(/^openapi#\/components\/schemas\/[^/]+/, '')})`,
          );
    }
    const name = `${method.toUpperCase()} ${route.template} (${route.operation.operationId ?? '?'}) → ${response.status}`;
    const responses = route.operation.responses;
    const key =
      String(response.status) in responses
        ? String(response.status)
        : `${String(response.status)[0]}XX` in responses
          ? `${String(response.status)[0]}XX`
          : 'default';
    const documented = responses[key] as Json | undefined;
    if (!documented) return [`${name}: status not documented (documented: ${Object.keys(responses).join(', ')})`];

    const problems: string[] = [];
    const headers = (documented.headers as Record<string, Json> | undefined) ?? {};
    for (const [header, value] of Object.entries(headers)) {
      const spec = this.resolve(value);
      if (spec.required && response.headers[header.toLowerCase()] === undefined)
        problems.push(`${name}: required header ${header} missing`);
    }

    const content = documented.content as Record<string, Json> | undefined;
    const contentType = String(response.headers['content-type'] ?? '')
      .split(';')[0]
      .trim();
    const hasBody =
      (response.text ?? '').length > 0 || (response.body !== undefined && response.body !== null && !isEmptyObject(response.body));
    if (!hasBody) return problems;
    if (!content) {
      problems.push(`${name}: answered a body (${contentType || 'no content type'}) where the document describes none`);
      return problems;
    }
    if (!/json$/.test(contentType)) {
      if (!(contentType in content) && !Object.keys(content).some((t) => t === '*/*' || t.split('/')[1] === '*'))
        problems.push(`${name}: content type ${contentType || '(none)'} not documented (documented: ${Object.keys(content).join(', ')})`);
      return problems;
    }
    const mediaKey = contentType in content ? contentType : Object.keys(content).find((t) => /json$/.test(t));
    if (!mediaKey) {
      problems.push(`${name}: content type ${contentType} not documented (documented: ${Object.keys(content).join(', ')})`);
      return problems;
    }
    if (mediaKey !== contentType) problems.push(`${name}: answered ${contentType}, documented ${mediaKey}`);
    const schema = content[mediaKey].schema as Json | undefined;
    if (!schema) return problems;
    const validatorKey = `${route.method} ${route.template} ${key} ${mediaKey}`;
    let validate = this.validators.get(validatorKey);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(schema) as Json);
      this.validators.set(validatorKey, validate);
    }
    if (!validate(parseBody(response))) {
      for (const error of validate.errors ?? []) {
        problems.push(
          `${name} [${mediaKey}]: body${error.instancePath || ''} ${error.message ?? 'invalid'} (schema ${describeSchemaPath(schema, error.schemaPath)})`,
        );
      }
    }
    return problems;
  }

  private resolve(value: Json): Json {
    const reference = value.$ref;
    if (typeof reference !== 'string') return value;
    const target = reference
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((node, key) => (node as Json | undefined)?.[key], this.document);
    return (target as Json | undefined) ?? {};
  }
}

/** The parsed body; supertest leaves `body` empty for JSON media types it does not know (application/problem+json). */
function parseBody(response: ContractResponse): unknown {
  if (response.text && (response.body === undefined || isEmptyObject(response.body))) {
    try {
      return JSON.parse(response.text);
    } catch {
      /* not JSON after all: validated as received */
    }
  }
  return response.body;
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

function describeSchemaPath(schema: Json, schemaPath: string): string {
  const top = typeof schema.$ref === 'string' ? schema.$ref : 'inline';
  return `${top} ${schemaPath.replace(/^openapi#/, '')}`;
}

/** OpenAPI 3.0 schema objects as JSON Schema for ajv: `nullable`, and references into the shared `openapi` schema. */
function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/')) out.$ref = `openapi${value}`;
    else if (key === 'example' || key === 'examples' || key === 'xml' || key === 'externalDocs') continue;
    else out[key] = toJsonSchema(value);
  }
  if (out.nullable === true) {
    delete out.nullable;
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...(out.enum as unknown[]), null];
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (!out.type) return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

const documents = new Map<string, Promise<OpenApiContract>>();

/** The contract of the server at `origin`, fetched once. */
export function contractFor(origin: string): Promise<OpenApiContract> {
  let contract = documents.get(origin);
  if (!contract) {
    contract = fetch(`${origin}/docs/openapi.json`).then(async (response) => {
      if (!response.ok) throw new Error(`GET ${origin}/docs/openapi.json answered ${response.status}`);
      return new OpenApiContract((await response.json()) as Json);
    });
    contract.catch(() => documents.delete(origin));
    documents.set(origin, contract);
  }
  return contract;
}
