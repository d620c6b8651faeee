-- Fencing (§ Control tools): the write proceeds only while the run's current fencing token is
-- the caller's and the lease is held. The run row is locked FOR SHARE until commit, so a new
-- acquisition (an UPDATE of that row) waits: a write is either entirely before the handover or
-- refused (VBF01 -> FencingError, src/classify-error.ts).
-- Last changed by migrations/0008_lean_governed_call_functions.sql.
CREATE OR REPLACE FUNCTION public.veetbot_assert_fence(p_run text, p_token bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM 1 FROM runs WHERE id = p_run::uuid AND fencing_token = p_token AND lease_owner IS NOT NULL FOR SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'VBF01', MESSAGE = 'The run lease fencing token no longer matches.', DETAIL = p_run;
  END IF;
END $function$;
