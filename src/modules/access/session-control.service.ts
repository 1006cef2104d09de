import { Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { DEFAULT_PAGE_LIMIT } from '../../common/pagination/page-query';
import { isId } from '../../common/ids';
import { AuthenticatedUser } from './authenticated-user';
import { RevokedSessionsDto, SessionDto, SessionListDto } from './dto/sessions.dto';
import { SessionCache } from './session-cache';
import { describeClient } from './session-client';
import { Sessions } from './sessions.service';
import type { ListedSession } from './sessions.repository';

const AT_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const CURSOR_SHAPE = /^[A-Za-z0-9_-]{1,200}$/;

/** Opaque keyset cursor of the session list: base64url of `<created_at> <id>`. */
function encodeCursor(session: ListedSession): string {
  return Buffer.from(`${session.at} ${session.id}`).toString('base64url');
}

function decodeCursor(cursor: string): { at: string; id: string } {
  const invalid = () => new ApiError('BAD_REQUEST', 'cursor is not valid; pass the next_cursor of a previous page unchanged');
  if (!CURSOR_SHAPE.test(cursor)) throw invalid();
  const [at, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split(' ');
  if (rest.length > 0 || !AT_SHAPE.test(at ?? '') || !isId(id, 'ses')) throw invalid();
  const ms = Date.parse(at);
  if (!(ms >= 0) || new Date(ms).toISOString().slice(0, 19) !== at.slice(0, 19)) throw invalid();
  return { at, id };
}

/**
 * The user's own view of their sessions (`/v1/sessions`): list them, revoke
 * one, or sign out everywhere. A revocation is immediate on every api
 * instance: this one forgets the user's checked sessions after the commit,
 * the others on the `user_auth_changed` notification of the `sessions`
 * trigger, and the gateway closes the sockets of a revoked session (4401).
 */
@Injectable()
export class SessionControl {
  constructor(
    private readonly sessions: Sessions,
    private readonly checkedSessions: SessionCache,
  ) {}

  async list(user: AuthenticatedUser, query: { limit?: number; cursor?: string }): Promise<SessionListDto> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
    const rows = await this.sessions.listLive(user.id, after, limit + 1);
    const page = rows.slice(0, limit);
    return {
      sessions: page.map((row) => toSessionDto(row, user.sessionId)),
      next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]) : null,
    };
  }

  /** Revokes one live session of the user (the calling one included); another user's, a revoked or an unknown id is 404. */
  async revoke(user: AuthenticatedUser, sessionId: string): Promise<void> {
    if (!isId(sessionId, 'ses') || !(await this.sessions.revokeOwned(user.id, sessionId))) {
      throw new ApiError('NOT_FOUND', `No live session ${sessionId}`);
    }
    await this.checkedSessions.forgetUserEverywhere(user.id);
  }

  /** Signs out everywhere: every live session of the user, or every one but the calling session. */
  async revokeAll(user: AuthenticatedUser, keepCurrent: boolean): Promise<RevokedSessionsDto> {
    const revoked = await this.sessions.revokeAllOf(undefined, user.id, keepCurrent ? user.sessionId : null);
    await this.checkedSessions.forgetUserEverywhere(user.id);
    return { revoked, current_session_kept: keepCurrent };
  }
}

function toSessionDto(row: ListedSession, currentSessionId: string): SessionDto {
  return {
    id: row.id,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    client: { description: describeClient(row.userAgent), user_agent: row.userAgent, ip_address: row.ipAddress },
    current: row.id === currentSessionId,
  };
}
