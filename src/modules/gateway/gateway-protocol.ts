import { ApiError } from '../../common/errors/api-error';
import { firstIllFormedText } from '../../common/http/text-input';
import { isObject } from '../../common/json';

/** Largest accepted frame; bigger ones close the connection with 1009 (ws enforces it before parsing). */
export const MAX_FRAME_BYTES = 64 * 1024;
/** Longest client frame `id`, echoed in `ack` and `error`. */
export const MAX_FRAME_ID_LENGTH = 128;

/** Close codes. 4xxx mirror the HTTP status of the user API error they stand for. */
export const CLOSE = {
  GOING_AWAY: 1001,
  TOO_BIG: 1009,
  INTERNAL: 1011,
  INVALID_TOKEN: 4401,
  USER_DELETED: 4403,
  /** The soul record the connection was opened under was deleted; the session goes on, so the client reconnects. */
  SOUL_DELETED: 4410,
  ABUSE: 4429,
} as const;

export const PRESENCE_STATUSES = ['online', 'away', 'dnd'] as const;
export type PresenceStatus = (typeof PRESENCE_STATUSES)[number];

export const CLIENT_EVENTS = [
  'ping',
  'message.send',
  'message.read',
  'typing',
  'presence.set',
  'capability.subscribe',
  'capability.unsubscribe',
  'sync',
] as const;
export type ClientEventType = (typeof CLIENT_EVENTS)[number];

export interface ClientFrame {
  type: ClientEventType;
  id?: string;
  data: Record<string, unknown>;
}

export interface ServerFrame {
  type: string;
  id?: string;
  data: Record<string, unknown>;
}

/**
 * Parses one text frame. Problems are `BAD_REQUEST` with the offending part
 * named; the `id` is returned even then (when readable) so the error can
 * point at the frame the client sent.
 */
export function parseFrame(text: string): { frame?: ClientFrame; id?: string; error?: ApiError } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: new ApiError('BAD_REQUEST', 'Frames must be JSON objects: {"type": "...", "id"?: "...", "data"?: {...}}') };
  }
  if (!isObject(value)) return { error: new ApiError('BAD_REQUEST', 'Frames must be JSON objects') };
  // The edge rule of the HTTP routes (src/common/http/text-input.ts), for frames: no NUL, no lone surrogate anywhere.
  const illFormed = firstIllFormedText(value);
  if (illFormed !== null) {
    const field = illFormed || 'frame';
    return { error: new ApiError('BAD_REQUEST', `${field} must be well-formed Unicode text without NUL characters (\\u0000)`) };
  }
  const id = typeof value.id === 'string' && value.id.length > 0 && value.id.length <= MAX_FRAME_ID_LENGTH ? value.id : undefined;
  if (value.id !== undefined && id === undefined)
    return { error: new ApiError('BAD_REQUEST', `id must be a string of 1 to ${MAX_FRAME_ID_LENGTH} characters`) };
  if (typeof value.type !== 'string') return { id, error: new ApiError('BAD_REQUEST', 'type is required') };
  if (!CLIENT_EVENTS.includes(value.type as ClientEventType))
    return { id, error: new ApiError('BAD_REQUEST', `type must be one of: ${CLIENT_EVENTS.join(', ')}`) };
  if (value.data !== undefined && !isObject(value.data)) return { id, error: new ApiError('BAD_REQUEST', 'data must be an object') };
  return { id, frame: { type: value.type as ClientEventType, id, data: value.data ?? {} } };
}

/** A required string field of `data`, at most `max` characters. */
export function requireString(data: Record<string, unknown>, field: string, max = 64): string {
  const value = data[field];
  if (value === undefined || value === null) throw new ApiError('BAD_REQUEST', `${field} is required`);
  if (typeof value !== 'string' || value.length === 0 || value.length > max)
    throw new ApiError('BAD_REQUEST', `${field} must be a string of 1 to ${max} characters`);
  return value;
}
