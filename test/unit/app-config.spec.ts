import { ConfigError, loadConfig } from '../../src/config/app-config';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      role: 'all',
      port: 3000,
      host: '0.0.0.0',
      publicBaseUrl: 'http://localhost:3000',
      docsUrl: 'http://localhost:3000',
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/service',
      redisUrl: 'redis://127.0.0.1:6379',
      allowPrivateTargets: false,
      logLevel: 'info',
      webhookDeliveryIps: { ipv4: [], ipv6: [] },
    });
    expect(config.idp.jwksUrl).toContain('securetoken@system.gserviceaccount.com');
  });

  it('derives Firebase issuer and audience from IDP_PROJECT_ID', () => {
    const { idp } = loadConfig({ IDP_PROJECT_ID: 'acme-prod' });
    expect(idp).toMatchObject({ issuer: 'https://securetoken.google.com/acme-prod', audience: 'acme-prod' });
  });

  it.each([
    ['APP_ROLE', 'both', 'APP_ROLE must be one of api, worker, all'],
    ['PORT', '70000', 'PORT must be a TCP port number'],
    ['PUBLIC_BASE_URL', 'localhost:3000', 'PUBLIC_BASE_URL must use http or https'],
    ['DATABASE_URL', 'mysql://x/y', 'DATABASE_URL must use postgres or postgresql'],
    ['ENCRYPTION_KEY', Buffer.alloc(16).toString('base64'), 'ENCRYPTION_KEY must be 32 bytes'],
    ['ALLOW_PRIVATE_TARGETS', 'maybe', 'ALLOW_PRIVATE_TARGETS must be true or false'],
    [
      'WEBHOOK_DELIVERY_IPS',
      '10.0.0.0/8,not-a-cidr',
      'WEBHOOK_DELIVERY_IPS must be a comma-separated list of CIDR ranges (bad entry "not-a-cidr")',
    ],
    ['LOG_LEVEL', 'loud', 'LOG_LEVEL must be one of'],
    ['SMTP_URL', 'mail.example.com', 'SMTP_URL must'],
    ['OPERATOR_TOKEN', 'short', 'OPERATOR_TOKEN must be at least 16 characters'],
  ])('rejects %s=%s naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('reports every problem at once', () => {
    try {
      loadConfig({ PORT: 'x', APP_ROLE: 'y' });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toHaveLength(2);
    }
  });

  it('requires ENCRYPTION_KEY and an identity provider in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      /ENCRYPTION_KEY is required[\s\S]*IDP_PROJECT_ID is required|IDP_PROJECT_ID is required[\s\S]*ENCRYPTION_KEY is required/,
    );
  });

  it('splits delivery ranges by family', () => {
    expect(loadConfig({ WEBHOOK_DELIVERY_IPS: '203.0.113.0/24, 2001:db8::/32' }).webhookDeliveryIps).toEqual({
      ipv4: ['203.0.113.0/24'],
      ipv6: ['2001:db8::/32'],
    });
  });
});
