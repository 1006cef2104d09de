import { Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { isId } from '../../common/ids';
import { DEFAULT_PAGE_LIMIT } from '../../common/pagination/page-query';
import { ConversationsRepository } from './conversations.repository';
import { ConversationListDto, ConversationListQueryDto } from './dto/conversation.dto';

/** Position in the inbox: the last message's time (null: no message yet) and the conversation id; the name is looked up. */
interface InboxPosition {
  at: string | null;
  id: string;
}

const AT_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const CURSOR_SHAPE = /^[A-Za-z0-9_-]{1,200}$/;

function encodeInboxCursor(position: InboxPosition): string {
  return Buffer.from(`${position.at ?? '-'} ${position.id}`).toString('base64url');
}

function decodeInboxCursor(cursor: string): InboxPosition {
  const invalid = () => new ApiError('BAD_REQUEST', 'cursor is not valid; pass the next_cursor of a previous page unchanged');
  if (!CURSOR_SHAPE.test(cursor)) throw invalid();
  const [at, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split(' ');
  if (rest.length > 0 || !(isId(id, 'con') || isId(id, 'grp'))) throw invalid();
  if (at === '-') return { at: null, id };
  const ms = Date.parse(at ?? '');
  if (!AT_SHAPE.test(at ?? '') || !(ms >= 0) || new Date(ms).toISOString().slice(0, 19) !== at.slice(0, 19)) throw invalid();
  return { at, id };
}

/** `GET /v1/conversations`: the inbox. */
@Injectable()
export class ConversationsService {
  constructor(private readonly conversations: ConversationsRepository) {}

  async list(userId: string, query: ConversationListQueryDto): Promise<ConversationListDto> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const after = query.cursor === undefined ? null : decodeInboxCursor(query.cursor);
    const entries = await this.conversations.page(userId, after, limit + 1);
    const page = entries.slice(0, limit);
    const last = page[page.length - 1];
    return {
      conversations: page.map((entry) => entry.conversation),
      next_cursor: entries.length > limit ? encodeInboxCursor({ at: last.positionAt, id: last.conversation.id }) : null,
    };
  }
}
