import { ApiError } from '../../common/errors/api-error';
import { isId } from '../../common/ids';

/** Position of a message in a thread: its `created_at` at full (microsecond) precision, and its id to break ties. */
export interface MessagePosition {
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ`, as PostgreSQL stores it; a JS Date would drop the microseconds. */
  at: string;
  id: string;
}

const AT_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const CURSOR_SHAPE = /^[A-Za-z0-9_-]{1,200}$/;

/** SQL rendering `column` in the cursor's timestamp form. */
export const positionAtSql = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** Opaque keyset cursor: base64url of `<created_at> <id>`. */
export function encodeCursor(position: MessagePosition): string {
  return Buffer.from(`${position.at} ${position.id}`).toString('base64url');
}

export function decodeCursor(cursor: string): MessagePosition {
  const invalid = () => new ApiError('BAD_REQUEST', 'cursor is not valid; pass the next_cursor of a previous page unchanged');
  if (!CURSOR_SHAPE.test(cursor)) throw invalid();
  const [at, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split(' ');
  if (rest.length > 0 || !AT_SHAPE.test(at ?? '') || !isId(id, 'msg') || !isRealInstant(at)) throw invalid();
  return { at, id };
}

/** Refuses what matches the shape but is no real instant (Feb 30, 24:00), which PostgreSQL would reject. */
function isRealInstant(at: string): boolean {
  const ms = Date.parse(at);
  return ms >= 0 && new Date(ms).toISOString().slice(0, 19) === at.slice(0, 19);
}
