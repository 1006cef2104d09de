import { SetMetadata } from '@nestjs/common';
import { EntityManager } from 'typeorm';

export const PERSONAL_DATA_SECTION = Symbol('PERSONAL_DATA_SECTION');

/**
 * A provider that holds some of a user's personal data. The privacy area
 * discovers every provider marked `@PersonalDataSection()` and uses it to build
 * exports and to erase data with the soul record, so no area has to import the
 * privacy module and privacy never reaches into another area's tables.
 */
export interface PersonalDataSource {
  /** Key of this section in the export document, e.g. `contacts`. */
  readonly section: string;
  /** The user's rows as plain JSON (ISO timestamps), read with the export transaction's manager. */
  exportFor(userId: string, manager: EntityManager): Promise<unknown>;
  /**
   * Deletes what is derived from the soul record, inside the `DELETE /v1/soul`
   * transaction. Omit it for data the user keeps (contacts, messages).
   * Returns the number of rows removed.
   */
  eraseWithSoul?(userId: string, manager: EntityManager): Promise<number>;
  /**
   * Runs inside the account erasure's transaction (`DELETE /v1/me`), before
   * the user row goes with every row that names it by a cascading foreign
   * key: for what that cascade leaves (rows kept for other users, which must
   * still stop pointing at the person). Returns the number of rows changed.
   */
  eraseWithAccount?(userId: string, manager: EntityManager): Promise<number>;
}

export const PersonalDataSection = (): ClassDecorator => SetMetadata(PERSONAL_DATA_SECTION, true);
