/**
 * The soul record's trait vocabulary (the spec leaves it open; see docs/decisions.md).
 * Small enums keep traits comparable between users and usable by the agent composer.
 */
export const COMMUNICATION_STYLES = ['direct', 'diplomatic', 'analytical', 'expressive'] as const;
export const HUMOUR_STYLES = ['none', 'dry', 'playful', 'witty'] as const;
export type CommunicationStyle = (typeof COMMUNICATION_STYLES)[number];
export type HumourStyle = (typeof HUMOUR_STYLES)[number];

export const MAX_VALUES = 20;
export const MAX_VALUE_LENGTH = 40;

export interface SoulTraits {
  communication_style: CommunicationStyle;
  humour: HumourStyle;
  /** 0 = casual, 1 = formal. */
  formality: number;
  /** 0 = matter-of-fact, 1 = warm and attentive to feelings. */
  empathy: number;
}

/** Where a new user starts: the middle of every scale, until they say otherwise. */
export const INITIAL_TRAITS: SoulTraits = { communication_style: 'diplomatic', humour: 'dry', formality: 0.5, empathy: 0.5 };
