#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ssh_config as ssh reads it, under the default libssh2 transport (core/sshkeys.c): a
# ProxyCommand through a jump host to a node the head cannot reach, one that exits at once,
# an IdentityAgent socket, HostKeyAlias. Each node reads one -F file written here.
source "$(dirname "$0")/../lib.sh"
source "$CD_TOP/tests/integration/itest.sh"
ITEST_FILE=sshconfig
itest_need_root

D=$(mktemp -d /tmp/cd-sshcfg.XXXXXX)
AGENT_PID=
cleanup() {
	[[ -n $AGENT_PID ]] && kill "$AGENT_PID" 2>/dev/null
	rm -rf "$D"
}
trap cleanup EXIT

CD_QUIET=1 cluster_up 3 >/dev/null || { result FAIL "$ITEST_FILE/cluster-up"; exit 1; }
CFG=$D/config
# node3 refuses the head's own connections to its sshd: only a jump host reaches it
ip netns exec "$(cluster_node_ns 3)" nft -f - <<NFT || { result FAIL "$ITEST_FILE/cluster-up"; exit 1; }
add table inet cd_sshcfg
add chain inet cd_sshcfg input { type filter hook input priority 0; policy accept; }
add rule inet cd_sshcfg input ip saddr $CD_HEAD_IP tcp dport 22 reject with tcp reset
NFT
# a user certificate for the run's key, from a CA no node trusts: ssh offers it, then the key
ssh-keygen -q -t ed25519 -N '' -f "$D/ca" && cp "$CD_HOME/.ssh/id_ed25519.pub" "$D/id_ed25519.pub" &&
	ssh-keygen -q -s "$D/ca" -I cd-test -n root "$D/id_ed25519.pub" ||
	{ result FAIL "$ITEST_FILE/cluster-up"; exit 1; }
# known_hosts that holds node2's key under an alias only
printf 'node2-key %s\n' "$(cut -d' ' -f1,2 "$CD_RUN/n2/ssh_host_ed25519_key.pub")" >"$D/known_hosts_alias"
cat >"$CFG" <<CFG_END
Host hidden2 hidden3
  ProxyCommand ssh -F $CD_SSH_CONFIG -W %h:%p node1
Host hidden2
  HostName node2
Host hidden3
  HostName node3
Host deadproxy
  HostName node2
  ProxyCommand sh -c 'echo the jump host is down >&2; exit 7'
Host agent2
  HostName node2
  IdentityFile /nonexistent/id_ed25519
  IdentityAgent $D/agent.sock
Host noagent2
  HostName node2
  IdentityFile /nonexistent/id_ed25519
  IdentityAgent none
Host cert2
  HostName node2
  CertificateFile $D/id_ed25519-cert.pub
Host alias2
  HostName $(cluster_node_ip 2)
  HostKeyAlias node2-key
  UserKnownHostsFile $D/known_hosts_alias
Host * !agent2 !noagent2
  IdentityFile $CD_HOME/.ssh/id_ed25519
  IdentitiesOnly yes
Host *
  User root
  BatchMode yes
  UserKnownHostsFile $CD_HOME/.ssh/known_hosts
  GlobalKnownHostsFile /dev/null
CFG_END
chmod 600 "$CFG"

t_proxycommand_through_a_jump_host_reaches_a_node_the_head_cannot() {
	cd_head facts -F "$CFG" -w node3 --json
	expect_eq "$(jget 'd["nodes"][0]["error_code"]')" refused "a direct connection to node3" || return 1
	cd_head facts -F "$CFG" -w hidden2,hidden3 --json
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$(jget '" ".join(n["hostname"] + "/" + n["transport"] for n in d["nodes"])')" \
		"node2/openssh node3/openssh" "hostnames and transports" || return 1
	# said once for the run, not once per node
	expect_eq "$(grep -c 'ProxyCommand in .*: using the openssh transport for this node' <<<"$err")" 1 \
		"notices on stderr" || return 1
	expect_match "$err" "^clusterdoc: hidden[23]: ProxyCommand in $CFG: using the openssh transport for this node$" "the notice"
}

t_proxycommand_that_exits_at_once_names_node_key_and_status_and_others_answer() {
	cd_head facts -F "$CFG" -w deadproxy,node1,node2 --json
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$(jget '[n["host"] for n in d["nodes"] if n["reachable"]]')" "['node1', 'node2']" \
		"the other nodes answer" || return 1
	expect_eq "$(jget '[n["error_code"] for n in d["nodes"] if n["host"] == "deadproxy"][0]')" proxy \
		"error_code" || return 1
	expect_match "$(jget '[n["error"] for n in d["nodes"] if n["host"] == "deadproxy"][0]')" \
		"^deadproxy: ProxyCommand in $CFG \(\`sh -c 'echo the jump host is down >&2; exit 7'\`\) exited with status 7 before the SSH session began: the jump host is down$" \
		"error"
}

# a real ssh-agent on a private socket, holding the run's key (started once)
start_agent() {
	[[ -n $AGENT_PID ]] && return 0
	ssh-agent -D -a "$D/agent.sock" >/dev/null 2>&1 &
	AGENT_PID=$!
	local i
	for ((i = 0; i < 50; i++)); do [[ -S $D/agent.sock ]] && break; sleep 0.1; done
	SSH_AUTH_SOCK=$D/agent.sock ssh-add -q "$CD_HOME/.ssh/id_ed25519" || { echo "    ssh-add failed"; return 1; }
}

t_identityagent_socket_is_used_by_libssh2() {
	start_agent || return 1
	# the key is only in that agent; SSH_AUTH_SOCK is unset in the head
	cd_head facts -F "$CFG" -w agent2 --json
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["hostname"] + "/" + d["nodes"][0]["transport"]')" node2/ssh \
		"hostname and transport"
}

t_identityagent_none_keeps_the_agent_of_ssh_auth_sock_out() {
	start_agent || return 1
	out=$(cluster_head_exec env SSH_AUTH_SOCK="$D/agent.sock" CLUSTERDOC_AGENT="$CLUSTERDOC_AGENT" \
		"$CLUSTERDOC" facts -F "$CFG" -w noagent2 --json 2>/dev/null)
	rc=$?
	expect_eq "$rc" 2 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["error_code"] + "/" + d["nodes"][0]["transport"]')" auth/ssh \
		"error_code and transport"
}

t_certificatefile_sends_the_node_to_openssh_and_says_so() {
	cd_head facts -F "$CFG" -w cert2,node1 --json
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$(jget '" ".join(n["host"] + "/" + n["transport"] for n in d["nodes"])')" \
		"cert2/openssh node1/ssh" "transports" || return 1
	expect_match "$err" "^clusterdoc: cert2: CertificateFile in $CFG: using the openssh transport for this node$" "the notice"
}

t_hostkeyalias_is_the_name_looked_up_in_known_hosts() {
	cd_head facts -F "$CFG" -w alias2 --json
	expect_eq "$rc" 0 "exit status" || return 1
	expect_eq "$(jget 'd["nodes"][0]["hostname"] + "/" + d["nodes"][0]["transport"]')" node2/ssh \
		"hostname and transport"
}

itest_run_all
