export const PRODUCT = 'Developer console';
