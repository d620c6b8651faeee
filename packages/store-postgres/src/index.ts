export { openDatabase } from './database';
export type { Database, OpenDatabaseOptions, TransactionScope } from './database';
export { migrate, MIGRATIONS_FOLDER } from './migrate';
export { createStores } from './stores';
export { classifyDriverError } from './classify-error';
export { APP_ROLE, MAINTENANCE_ROLE, TENANT_SETTING } from './roles';
