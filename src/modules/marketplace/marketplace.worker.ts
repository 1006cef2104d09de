import { Type } from '@nestjs/common';
import { InstallChanges } from './install-changes.subscriber';

/** Domain event subscribers of the marketplace (worker role): installs follow published versions and refused tokens. */
export const MARKETPLACE_SUBSCRIBERS: Type[] = [InstallChanges];
