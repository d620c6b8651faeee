export { AjvSchemaValidator } from './ajv-schema-validator';
