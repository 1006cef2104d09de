export interface Version {
  major: number;
  minor: number;
  patch: number;
}

const SHAPE = /^(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})$/;

/** Three dot-separated numbers, no leading zeros, as the spec's package versions are. */
export function parseVersion(text: string): Version | null {
  const match = SHAPE.exec(text);
  return match ? { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) } : null;
}

export function compareVersions(a: Version, b: Version): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}
