/** The product name in titles and the top bar. */
export const PRODUCT = 'Soul';
