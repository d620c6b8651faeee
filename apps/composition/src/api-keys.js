"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.API_KEY_PATTERN = void 0;
exports.generateApiKey = generateApiKey;
exports.hashApiKey = hashApiKey;
exports.apiKeyPrefix = apiKeyPrefix;
var node_crypto_1 = require("node:crypto");
/** `vbk_` + 32 base64url characters (192 random bits). */
exports.API_KEY_PATTERN = /^vbk_[A-Za-z0-9_-]{16,128}$/;
function generateApiKey() {
    return "vbk_".concat((0, node_crypto_1.randomBytes)(24).toString('base64url'));
}
/** Keys are stored as sha256 (ApiKeyStore.keyHash): the key itself never reaches the database. */
function hashApiKey(key) {
    return (0, node_crypto_1.createHash)('sha256').update(key, 'utf8').digest('hex');
}
/** The first characters, to recognise a key in a list without revealing it. */
function apiKeyPrefix(key) {
    return key.slice(0, 12);
}
