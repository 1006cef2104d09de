/**
 * A failure that retrying cannot fix (the contact is gone, the input no longer
 * makes sense). Its message is shown to the user as the action's `error`.
 */
export class AgentActionRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AgentActionRejected';
  }
}
