#!/bin/sh
# research-engine's PreToolUse guard for Claude Code. It reads the hook's JSON on stdin and prints a decision
# only when it denies; for everything else it prints nothing, so the permission rules decide as usual.
#
#  - WebFetch and WebSearch are denied: every byte a run reads goes through `research-engine fetch` and
#    `research-engine search`, which are SSRF-guarded, polite and recorded in the trace.
#  - `research-engine verify ...` runs only in the research-verifier agent (the client names the calling
#    agent in `agent_type`; the main session has none). Its `verify prepare` and its prose verdicts
#    (`verify prose S-NN --verdict ...`) must pass that same name as `--agent`, which the run records and
#    `research-engine report finish` and `validate` check.
#
# The hook input is the client's compact JSON ("key":"value", no spaces), which the patterns below rely on;
# the conformance suite (tools/tests/claude_code) runs this script under the pinned client.

input=$(cat)

deny() {
  printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"%s"}}\n' "$1"
  exit 0
}

case $input in
  *'"tool_name":"WebFetch"'* | *'"tool_name":"WebSearch"'*)
    deny "research-engine: WebFetch and WebSearch are off. Search with research-engine search and fetch with research-engine fetch, so every source is guarded and recorded in the run." ;;
  *'"tool_name":"Bash"'*) ;;
  *) exit 0 ;;
esac

case $input in
  *'research-engine verify '*) ;;
  *) exit 0 ;;
esac

agent=$(printf '%s' "$input" | sed -n 's/.*"agent_type":"\([A-Za-z0-9_.:-]*\)".*/\1/p')
case $agent in
  research-verifier | research-engine:research-verifier) ;;
  '') deny "research-engine: the verify stage runs only in the research-verifier agent, not in the main session. Start it with the research-verify skill, which forks into that agent." ;;
  *) deny "research-engine: the verify stage runs only in the research-verifier agent, not in $agent. The verifier was not started: check that the research-verifier agent is installed under the name the research-verify skill gives." ;;
esac

case $input in
  *'research-engine verify prepare'* | *'research-engine verify prose '*'--verdict'*)
    case $input in
      *"--agent $agent "* | *"--agent $agent\""*) ;;
      *) deny "research-engine: run verify prepare and verify prose with --agent $agent so the run records who verified it." ;;
    esac ;;
esac
exit 0
