import { ProblemError } from '../../common/errors/problem-error';

/**
 * States of a package version and the moves between them. The spec gives no
 * state values; these names follow the table "States and transitions".
 *
 *   draft ──submit──▶ in_review ──approve──▶ approved ──publish──▶ published ──(newer published)──▶ superseded
 *     ▲  └─submit (data_only, policy checks pass)──▶ approved
 *     └────────reject (reason)───── in_review
 */
export const VERSION_STATES = ['draft', 'in_review', 'approved', 'published', 'superseded'] as const;
export type VersionState = (typeof VERSION_STATES)[number];

export type VersionMove = 'submit' | 'approve' | 'reject' | 'publish' | 'supersede';

const MOVES: Record<VersionMove, { from: VersionState[]; hint: string }> = {
  submit: { from: ['draft'], hint: 'only draft versions can be submitted' },
  approve: { from: ['in_review'], hint: 'only versions in review can be approved' },
  reject: { from: ['in_review'], hint: 'only versions in review can be rejected' },
  publish: { from: ['approved'], hint: 'only approved (or automatically listed) versions can be published' },
  supersede: { from: ['published'], hint: 'only the published version can be superseded' },
};

/** Refuses an illegal move with a problem naming the current state. */
export function assertMove(move: VersionMove, current: string, versionId: string): void {
  const rule = MOVES[move];
  if (!rule.from.includes(current as VersionState)) {
    throw new ProblemError('conflict', `Version ${versionId} is ${current}; ${rule.hint}`, { current_state: current });
  }
}
