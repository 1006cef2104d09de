/**
 * Which service user a contact reaches, as SQL fragments. A contact is linked
 * to the user whose verified address (`users.verified_email`: lower-cased,
 * unique, set only from a token with `email_verified: true`) equals the
 * contact's email, unless that user is the owner. The link is derived each
 * time it is read, never stored, so it follows the address at once when a
 * newer verified login takes it over.
 *
 * Who is linked stays inside the service: a contact shows only `connected`
 * (both people added each other), and frames about another person carry the
 * viewer's own contact id for them.
 */

/** The user a contact (table alias `c`) is linked to, or NULL. */
export const linkedUserSql = (c: string): string =>
  `(SELECT lu.id FROM users lu WHERE ${c}.email IS NOT NULL AND lu.verified_email = lower(${c}.email) AND lu.id <> ${c}.user_id)`;

/**
 * Whether a contact (alias `c`) is mutual: it is linked to a user who in turn
 * has a contact linked to the owner (the owner's verified address).
 */
export const connectedSql = (c: string): string =>
  `EXISTS (SELECT 1 FROM users lu JOIN users ow ON ow.id = ${c}.user_id
             JOIN contacts back ON back.user_id = lu.id AND back.email IS NOT NULL AND lower(back.email) = ow.verified_email
            WHERE ${c}.email IS NOT NULL AND lu.verified_email = lower(${c}.email) AND lu.id <> ${c}.user_id)`;

/** The id of the contact that user `owner` has for user `other` (linked to `other`), or NULL. Both are SQL expressions. */
export const contactForUserSql = (owner: string, other: string): string =>
  `(SELECT k.id FROM users ku JOIN contacts k ON k.user_id = ${owner} AND k.email IS NOT NULL AND lower(k.email) = ku.verified_email
     WHERE ku.id = ${other} AND ku.id <> k.user_id)`;
