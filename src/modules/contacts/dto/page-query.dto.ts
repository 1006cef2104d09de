import { OffsetPageQuery } from '../../../common/pagination/page-query';

export { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, MAX_PAGE_OFFSET, pageOf, type Page } from '../../../common/pagination/page-query';

/** `?limit&offset` of the contact and group lists: the shared offset page (src/common/pagination). */
export class PageQueryDto extends OffsetPageQuery {}
