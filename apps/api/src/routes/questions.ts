import { AnsweredQuestion, AnswerQuestionRequest } from '@veetbot/client';
import type { ApiDeps } from '../deps';
import { idParam } from '../params';
import type { RouteTable } from '../routing';

/**
 * docs/adr/0051: an answer enters the run as USER trust, so only the user's side may give it — a
 * key holding `questions.answer`, which no wildcard carries (EXPLICIT_SCOPES) and an agent's key
 * is not given. The agent answering its own question would launder its model's text into USER.
 */
export const QUESTIONS_ANSWER = 'questions.answer';

export function questionRoutes(routes: RouteTable, deps: ApiDeps): void {
  routes.add(
    {
      method: 'post',
      path: '/v1/questions/:question_id/answer',
      operationId: 'answerQuestion',
      summary:
        "Answer a question conversation.ask_user asked, as its user (scope questions.answer, which an agent's key does not hold): the call completes with the answer (trust user) and the run continues. Idempotent on the question id; a different second answer is 409 question.already_answered.",
      tag: 'runs',
      scope: QUESTIONS_ANSWER,
      body: AnswerQuestionRequest,
      responses: { 200: { description: 'The answered question.', schema: AnsweredQuestion } },
    },
    async (c, { body, principal }) => {
      const answered = await deps.runtime.answerQuestion(principal.tenant_id, idParam(c, 'question_id'), body.answer);
      return c.json({ question_id: answered.questionId, run_id: answered.runId, item: answered.item }, 200);
    },
  );
}
