import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { PERSONAL_DATA_SECTION, PersonalDataSource } from '../../common/personal-data';

/** Keys the export document and the deletion summary use for themselves. */
const RESERVED_SECTIONS = new Set(['exported_at', 'format_version', 'profile', 'soul', 'exports']);
const SECTION_NAME = /^[a-z][a-z0-9_]{0,62}$/;

/**
 * Every `@PersonalDataSection()` provider of the running application, found
 * once with the DiscoveryService. A malformed or duplicated section is a
 * programming error: it stops start-up rather than produce exports that
 * silently miss data.
 */
@Injectable()
export class PersonalDataSections implements OnModuleInit {
  private readonly logger = new Logger(PersonalDataSections.name);
  private sources: readonly PersonalDataSource[] | null = null;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    const names = this.all().map((s) => s.section);
    this.logger.log(`personal data sections: ${names.length ? names.join(', ') : 'none'}`);
  }

  /** Sections in name order, so exports are laid out the same way every time. */
  all(): readonly PersonalDataSource[] {
    // Lazily as well as at init: BullMQ workers start in their own onModuleInit and may run a job first.
    this.sources ??= this.discover();
    return this.sources;
  }

  private discover(): PersonalDataSource[] {
    const byName = new Map<string, { source: PersonalDataSource; owner: string }>();
    const seen = new Set<unknown>();
    for (const wrapper of this.discovery.getProviders()) {
      const metatype = wrapper.metatype;
      const instance: unknown = wrapper.instance;
      if (typeof metatype !== 'function' || !this.reflector.get<boolean | undefined>(PERSONAL_DATA_SECTION, metatype)) continue;
      const owner = metatype.name;
      if (!wrapper.isDependencyTreeStatic() || !instance) {
        throw new Error(`@PersonalDataSection() ${owner} must be a singleton provider (not request- or transient-scoped)`);
      }
      if (seen.has(instance)) continue;
      seen.add(instance);
      const source = instance as Partial<PersonalDataSource>;
      if (typeof source.section !== 'string' || !SECTION_NAME.test(source.section)) {
        throw new Error(`@PersonalDataSection() ${owner} needs a snake_case \`section\` name (got ${JSON.stringify(source.section)})`);
      }
      if (RESERVED_SECTIONS.has(source.section))
        throw new Error(`@PersonalDataSection() ${owner} uses the reserved name "${source.section}"`);
      if (typeof source.exportFor !== 'function')
        throw new Error(`@PersonalDataSection() ${owner} must implement exportFor(userId, manager)`);
      for (const hook of ['eraseWithSoul', 'eraseWithAccount'] as const) {
        if (source[hook] !== undefined && typeof source[hook] !== 'function') {
          throw new Error(`@PersonalDataSection() ${owner}.${hook} must be a method`);
        }
      }
      const clash = byName.get(source.section);
      if (clash) throw new Error(`@PersonalDataSection() "${source.section}" is claimed by both ${clash.owner} and ${owner}`);
      byName.set(source.section, { source: source as PersonalDataSource, owner });
    }
    return [...byName.values()].map((entry) => entry.source).sort((a, b) => a.section.localeCompare(b.section));
  }
}
