/** The codes a refused descriptor gets; the service answers each with the problem type of the same name. */
export type DescriptorErrorCode = 'missing_field' | 'invalid_format' | 'invalid_schema';

/** One reason a descriptor request was refused; `DescriptorError.errors` lists them all. */
export interface DescriptorFault {
  code: DescriptorErrorCode;
  /** The request field at fault, such as `capabilities[1].surfaceGuidance.intent`. */
  field: string;
  /**
   * JSONPath into the schema at fault: for `invalid_schema`, into the capability's own JSON Schema
   * (`$.properties.amount`); otherwise, the rule of the published descriptor schema that refused
   * (`$.$defs.stateCapability.properties.refreshInterval.maximum`).
   */
  schema_path: string;
  message: string;
}

/**
 * What the service adds to its problem answer beside `detail`, named and ordered as the answer
 * carries them (`field`, `schema_path`, `errors`), so the service can pass them on unchanged and
 * a CLI can print the same thing.
 */
export interface DescriptorErrorMembers {
  field: string;
  schema_path?: string;
  errors?: Array<Pick<DescriptorFault, 'field' | 'schema_path' | 'message' | 'code'>>;
}

/**
 * A descriptor the rules refuse. The rules know nothing of HTTP: the service turns this into its
 * own problem error (same code, detail and members), the CLI prints it.
 */
export class DescriptorError extends Error {
  readonly field: string;
  readonly schemaPath?: string;
  readonly errors?: DescriptorErrorMembers['errors'];

  constructor(
    readonly code: DescriptorErrorCode,
    readonly detail: string,
    readonly members: DescriptorErrorMembers,
  ) {
    super(detail);
    this.name = 'DescriptorError';
    this.field = members.field;
    this.schemaPath = members.schema_path;
    this.errors = members.errors;
  }
}
