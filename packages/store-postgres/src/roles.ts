/** The roles and setting the row-level security migration creates (migrations/0001_row_level_security.sql). */
export const APP_ROLE = 'veetbot_app';
export const MAINTENANCE_ROLE = 'veetbot_maintenance';
export const TENANT_SETTING = 'veetbot.tenant_id';
