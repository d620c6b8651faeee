import type { ReconcileAnswer, ReconcileQuery, Reconciler, SkillStore } from '@veetbot/ports';
import { skillRowId } from '../skill/skill-manage';

/**
 * skill.manage's reconciler (docs/adr/0063), by its rows in the skills store. A create or update
 * writes a row whose id derives from the call's idempotency key (skillRowId): that row present
 * with the call's content → applied. Absent proves nothing (a later delete removes every
 * version) → unknown. A delete removes every version of the name: a version created before the
 * watermark still present → not_applied; none left → unknown (this call or another removed them).
 */
export function createSkillReconciler(options: { readonly skills: SkillStore }): Reconciler {
  return {
    name: 'skill.manage',
    async reconcile(query: ReconcileQuery): Promise<ReconcileAnswer> {
      const { operation, name, content } = query.arguments;
      if (typeof name !== 'string') return { outcome: 'unknown', evidence: 'The row names no skill.' };
      const rows = (await options.skills.list(query.tenantId)).filter((row) => row.name === name);
      if (operation === 'create' || operation === 'update') {
        const id = skillRowId(query.tenantId, query.idempotencyKey);
        const row = rows.find((r) => r.id === id);
        if (row === undefined) {
          return { outcome: 'unknown', evidence: `No skill row ${id} (the call's key); a later delete could have removed it.` };
        }
        if (row.content !== content) return { outcome: 'unknown', evidence: `Skill row ${id} exists but its content is not the call's.` };
        return { outcome: 'applied', evidence: `Skill row ${id} (${name} version ${row.version}) exists with the call's content.` };
      }
      if (operation === 'delete') {
        const older = rows.find((r) => r.createdAt.getTime() < query.watermarkAt.getTime());
        if (older !== undefined) {
          return {
            outcome: 'not_applied',
            evidence: `Skill ${name} version ${older.version}, created before the watermark, is still present; the delete removes every version.`,
          };
        }
        return { outcome: 'unknown', evidence: `No version of skill ${name} created before the watermark remains.` };
      }
      return { outcome: 'unknown', evidence: 'Not a writing operation.' };
    },
  };
}
