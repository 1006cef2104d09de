import { contentSecurityPolicy } from '../../src/common/http/web-pages';

const directives = (policy: string) => new Map(policy.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));

describe('content security policy of /app and /console', () => {
  it('allows nothing but this origin without Firebase sign-in', () => {
    const policy = directives(contentSecurityPolicy());
    for (const name of ['default-src', 'script-src', 'style-src', 'connect-src']) expect(policy.get(name)).toEqual(["'self'"]);
    expect(policy.has('frame-src')).toBe(false);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    expect(policy.get('object-src')).toEqual(["'none'"]);
  });

  it('opens only what Firebase web sign-in needs when it is configured: its endpoints, the popup script and the auth domain frame', () => {
    const policy = directives(contentSecurityPolicy('demo-project.firebaseapp.com'));
    expect(policy.get('script-src')).toEqual(["'self'", 'https://apis.google.com']);
    expect(policy.get('connect-src')).toEqual(["'self'", 'https://identitytoolkit.googleapis.com', 'https://securetoken.googleapis.com']);
    expect(policy.get('frame-src')).toEqual(['https://demo-project.firebaseapp.com']);
    expect(policy.get('default-src')).toEqual(["'self'"]);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
  });
});
