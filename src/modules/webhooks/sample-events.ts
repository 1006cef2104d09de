import { WebhookEventType } from './dto/webhook.dto';

/** Sample `data` per type for test events: every field the spec lists, with plausible values. */
export function sampleData(type: WebhookEventType, appId: string): Record<string, unknown> {
  const now = new Date().toISOString();
  const common = {
    package_id: 'pkg_test000000000000000000',
    install_id: 'inst_test00000000000000000',
    user_id: 'usr_test000000000000000000',
  };
  switch (type) {
    case 'package.submitted':
      return {
        package_id: common.package_id,
        version_id: 'ver_test000000000000000000',
        version: '1.0.0',
        name: 'Test package',
        risk_tier: 'data_only',
        submitted_by: 'developer@example.com',
      };
    case 'package.published':
      return {
        package_id: common.package_id,
        version_id: 'ver_test000000000000000000',
        version: '1.0.0',
        name: 'Test package',
        catalog_url: 'https://example.com/marketplace/test-package',
      };
    case 'package.suspended':
      return {
        package_id: common.package_id,
        reason: 'policy_violation',
        message: 'Test suspension',
        suspended_at: now,
        remediation: 'Nothing to do: this is a test event',
      };
    case 'install.created':
      return {
        install_id: common.install_id,
        user_id: common.user_id,
        package_id: common.package_id,
        version: '1.0.0',
        scopes_granted: ['profile:read'],
      };
    case 'install.removed':
      return { install_id: common.install_id, user_id: common.user_id, package_id: common.package_id, reason: 'user_uninstalled' };
    case 'capability.invoked':
      return {
        capability_name: 'test_capability',
        mode: 'state',
        user_id: common.user_id,
        install_id: common.install_id,
        request_id: `req_test_${appId.slice(-6)}`,
        duration_ms: 42,
        status: 'ok',
      };
    case 'capability.failed':
      return {
        capability_name: 'test_capability',
        mode: 'action',
        user_id: common.user_id,
        install_id: common.install_id,
        request_id: `req_test_${appId.slice(-6)}`,
        error_code: 'TIMEOUT',
        error_message: 'Test failure',
        retries_exhausted: true,
        duration_ms: 5000,
      };
  }
}
