#!/bin/bash
# DevStack plugin for pcloud-plugin (local.conf: see settings).
#
# Our code runs inside other services' processes, so this plugin starts
# nothing of its own. On each node it does what the services there need:
#   n-sch               the PcloudFilter in nova.conf, checked again once
#                       local.conf's post-config sections are merged
#   blazar-a, blazar-m  our Keystone service user, our plugins and options
#                       in blazar.conf; the ledger's database (blazar-m on
#                       the database server's node: PCLOUD_LEDGER_DB_NODE)
# Blazar's plugin must be enabled too (settings: plugin_requires). It
# configures blazar.conf in post-config and starts Blazar in extra, and
# each phase runs the plugins in the order of their enable_plugin lines;
# so blazar.conf and the ledger are done in post-config when Blazar's
# plugin runs before ours, else in extra (ours then runs before it starts
# Blazar): in both orders after Blazar wrote blazar.conf and before Blazar
# starts.

PCLOUD_BLAZAR_CONF=${PCLOUD_BLAZAR_CONF:-${BLAZAR_CONF_FILE:-/etc/blazar/blazar.conf}}
NOVA_ALL_FILTERS=nova.scheduler.filters.all_filters
# Blazar loads one plugin per resource type: ours serves virtual:instance,
# as Blazar's virtual.instance.plugin does, so it takes that one's place.
# Blazar's other plugins (physical.host.plugin, virtual.floatingip.plugin,
# flavor.instance.plugin, ...) serve other types and stay.
PCLOUD_INSTANCE_PLUGIN=pcloud.virtual.instance
PCLOUD_REPLACED_PLUGIN=virtual.instance.plugin

function pcloud_require_blazar_plugin {
    if ! is_plugin_enabled blazar; then
        die $LINENO "pcloud-plugin needs Blazar's DevStack plugin: add" \
            "'enable_plugin blazar https://opendev.org/openstack/blazar'" \
            "to local.conf, before 'enable_plugin pcloud-plugin ...'"
    fi
}

function _pcloud_blazar_plugin_runs_first {
    local plugin
    for plugin in ${DEVSTACK_PLUGINS//,/ }; do
        if [[ $plugin == blazar ]]; then
            return 0
        elif [[ $plugin == pcloud-plugin ]]; then
            return 1
        fi
    done
    return 1
}

function install_pcloud_plugin {
    # Without extras: the blazar extra would install Blazar and
    # blazarclient from the package index, in place of the checkouts
    # Blazar's plugin installs (and the extras' libraries, jsonschema,
    # oslo.policy and osc-lib, come with Blazar, blazarclient and the
    # openstack client, which DevStack installs). The filter needs nothing
    # beyond Nova and our own requirements.
    if is_service_enabled blazar-a blazar-m n-sch; then
        setup_develop "$PCLOUD_PLUGIN_DIR"
    fi
}

# Succeeds when nova.conf does not offer and enable the PcloudFilter (or
# offers a list of filters without Nova's own).
function _pcloud_nova_filters_missing {
    local available filters
    available=" $(iniget_multiline "$NOVA_CONF" filter_scheduler available_filters) "
    filters=$(iniget "$NOVA_CONF" filter_scheduler enabled_filters)
    [[ $available != *" $NOVA_ALL_FILTERS "* ||
        $available != *" $PCLOUD_FILTER_PATH "* ||
        ",${filters// /}," != *",$PCLOUD_FILTER,"* ]]
}

function configure_pcloud_nova_scheduler {
    local available filters
    # Once available_filters has a value Nova loads only the filters it
    # names: keep Nova's own (all_filters) there, once, whether Blazar's
    # plugin (which adds it only to an empty list) ran before ours or not.
    available=" $(iniget_multiline "$NOVA_CONF" filter_scheduler available_filters) "
    if [[ $available != *" $NOVA_ALL_FILTERS "* ]]; then
        iniadd "$NOVA_CONF" filter_scheduler available_filters \
            "$NOVA_ALL_FILTERS"
    fi
    if [[ $available != *" $PCLOUD_FILTER_PATH "* ]]; then
        iniadd "$NOVA_CONF" filter_scheduler available_filters \
            "$PCLOUD_FILTER_PATH"
    fi
    filters=$(iniget "$NOVA_CONF" filter_scheduler enabled_filters)
    if [[ ",${filters// /}," != *",$PCLOUD_FILTER,"* ]]; then
        iniset "$NOVA_CONF" filter_scheduler enabled_filters \
            "${filters:+$filters,}$PCLOUD_FILTER"
    fi
}

function create_pcloud_accounts {
    # Our own service user, with the admin role in the service project and
    # no other: the Nova calls of the Pcloud service and our Blazar plugins
    # (aggregates, os-services, hypervisors, servers of every project, live
    # migration, flavors) are open to admins only, and no narrower role
    # covers them; Placement's defaults ("admin or service") then accept it
    # for the mirror's reads and the ledger's writes (inventories,
    # allocations, resource classes).
    local user_id
    user_id=$(get_or_create_user "$PCLOUD_USER_NAME" "$SERVICE_PASSWORD" \
        "$SERVICE_DOMAIN_NAME")
    get_or_add_user_project_role admin "$user_id" "$SERVICE_PROJECT_NAME" \
        "$SERVICE_DOMAIN_NAME" "$SERVICE_DOMAIN_NAME"
    # And reader on the system, for [oslo_limit]: Keystone lists the limits
    # of every project only to system readers (a grant is idempotent).
    openstack --os-cloud devstack-system-admin role add --system all \
        --user "$user_id" reader
}

function _pcloud_keystone_auth {
    local conf=$1 group=$2
    iniset "$conf" "$group" auth_type password
    iniset "$conf" "$group" auth_url "$KEYSTONE_SERVICE_URI"
    iniset "$conf" "$group" username "$PCLOUD_USER_NAME"
    iniset "$conf" "$group" password "$SERVICE_PASSWORD"
    iniset "$conf" "$group" user_domain_name "$SERVICE_DOMAIN_NAME"
    iniset "$conf" "$group" project_name "$SERVICE_PROJECT_NAME"
    iniset "$conf" "$group" project_domain_name "$SERVICE_DOMAIN_NAME"
    iniset "$conf" "$group" region_name "$REGION_NAME"
}

# Blazar's list of plugins ($1) less the one ours replaces, in its order,
# then ours.
function _pcloud_merged_plugins {
    local plugin merged="" replaced=""
    if [[ ",$PCLOUD_BLAZAR_PLUGINS," == *",$PCLOUD_INSTANCE_PLUGIN,"* ]]; then
        replaced=$PCLOUD_REPLACED_PLUGIN
    fi
    for plugin in ${1//,/ }; do
        if [[ $plugin != "$replaced" ]]; then
            merged+=",$plugin"
        fi
    done
    for plugin in ${PCLOUD_BLAZAR_PLUGINS//,/ }; do
        if [[ "$merged," != *",$plugin,"* ]]; then
            merged+=",$plugin"
        fi
    done
    echo "${merged#,}"
}

# The inverse, for clean: ours out, Blazar's instance plugin back.
function _pcloud_unmerged_plugins {
    local plugin kept=""
    for plugin in ${1//,/ }; do
        if [[ $plugin == "$PCLOUD_INSTANCE_PLUGIN" ]]; then
            plugin=$PCLOUD_REPLACED_PLUGIN
        elif [[ ",$PCLOUD_BLAZAR_PLUGINS," == *",$plugin,"* ]]; then
            continue
        fi
        if [[ "$kept," != *",$plugin,"* ]]; then
            kept+=",$plugin"
        fi
    done
    echo "${kept#,}"
}

# [oslo_limit] of $1: Keystone unified limits (pcloud_plugin.quota), read
# by our service user on the system scope, for the endpoint of Blazar's
# service (which Blazar's plugin registered in its post-config).
function configure_pcloud_oslo_limit {
    local conf=$1 endpoint_id
    endpoint_id=$(openstack --os-cloud devstack-system-admin endpoint list \
        --service "$PCLOUD_LIMITS_SERVICE_TYPE" --interface public \
        --region "$REGION_NAME" -f value -c ID)
    if [[ -z $endpoint_id || $endpoint_id == *[[:space:]]* ]]; then
        die $LINENO "[oslo_limit] needs one public endpoint of service" \
            "type $PCLOUD_LIMITS_SERVICE_TYPE in $REGION_NAME; Keystone" \
            "lists: ${endpoint_id:-none}"
    fi
    iniset "$conf" oslo_limit auth_type password
    iniset "$conf" oslo_limit auth_url "$KEYSTONE_SERVICE_URI"
    iniset "$conf" oslo_limit username "$PCLOUD_USER_NAME"
    iniset "$conf" oslo_limit password "$SERVICE_PASSWORD"
    iniset "$conf" oslo_limit user_domain_name "$SERVICE_DOMAIN_NAME"
    iniset "$conf" oslo_limit system_scope all
    iniset "$conf" oslo_limit endpoint_id "$endpoint_id"
}

function configure_pcloud_blazar {
    local conf=$PCLOUD_BLAZAR_CONF plugins
    if [[ ! -f $conf ]] || ! ini_has_option "$conf" manager plugins; then
        die $LINENO "$conf has no [manager] plugins: Blazar's DevStack" \
            "plugin has not configured Blazar on this node, where" \
            "blazar-a or blazar-m is enabled"
    fi
    plugins=$(iniget "$conf" manager plugins)
    iniset "$conf" manager plugins "$(_pcloud_merged_plugins "$plugins")"
    iniset "$conf" pcloud_database connection \
        "$(database_connection_url "$PCLOUD_DB_NAME")"
    _pcloud_keystone_auth "$conf" pcloud_nova
    _pcloud_keystone_auth "$conf" pcloud_placement
    # The aggregate of the hosts Blazar's physical:host plugin holds, which
    # Blazar's plugin names from the same variable.
    iniset "$conf" pcloud blazar_freepool_name \
        "${PCLOUD_BLAZAR_FREEPOOL_NAME:-${BLAZAR_FREEPOOL_NAME:-freepool}}"
    configure_pcloud_oslo_limit "$conf"
}

function init_pcloud_database {
    # blazar-manager reads the ledger from its first moment.
    recreate_database "$PCLOUD_DB_NAME"
    "$PCLOUD_BIN_DIR/pcloud-manage" --config-file "$PCLOUD_BLAZAR_CONF" \
        db sync
}

# Succeeds on the node that creates the ledger's database: the one
# running the database server, as for DevStack's own services (or as
# PCLOUD_LEDGER_DB_NODE says).
function _pcloud_owns_database {
    if [[ -n $PCLOUD_LEDGER_DB_NODE ]]; then
        [[ $(trueorfalse False PCLOUD_LEDGER_DB_NODE) == True ]]
        return
    fi
    # shellcheck disable=SC2086
    is_service_enabled ${DATABASE_BACKENDS:-mysql postgresql}
}

function configure_pcloud_blazar_and_ledger {
    configure_pcloud_blazar
    if is_service_enabled blazar-m && _pcloud_owns_database; then
        init_pcloud_database
    fi
}

# In extra, after local.conf's [[post-config|$NOVA_CONF]] sections were
# merged (stack.sh merges them after the plugins' post-config, so an
# enabled_filters or available_filters there replaces the list ours went
# into) and nova-scheduler started: the filter back in, and nova-scheduler
# restarted to load it.
function check_pcloud_nova_scheduler {
    if ! _pcloud_nova_filters_missing; then
        return 0
    fi
    local msg
    # One argument: DevStack's warn prints its second only.
    msg="local.conf's post-config left $PCLOUD_FILTER out of $NOVA_CONF"
    msg+=" [filter_scheduler]: adding it back and restarting nova-scheduler"
    msg+=" (name $PCLOUD_FILTER in your enabled_filters, and"
    msg+=" $PCLOUD_FILTER_PATH beside $NOVA_ALL_FILTERS in your"
    msg+=" available_filters, to spare the restart)"
    warn $LINENO "$msg"
    configure_pcloud_nova_scheduler
    restart_service devstack@n-sch.service
}

function init_pcloud_mirror {
    # The first mirror pass, in test-config: DevStack's only phase after
    # stack.sh waited for the computes to register (is_nova_ready) and
    # mapped them (discover_hosts). blazar-manager's periodic pass keeps
    # the ledger current from then on, computes added later included.
    local lines msg output status=0
    output=$("$PCLOUD_BIN_DIR/pcloud-manage" \
        --config-file "$PCLOUD_BLAZAR_CONF" placement sync) || status=$?
    if [[ -n $output ]]; then
        echo "$output"
    fi
    if [[ $status == 0 ]]; then
        return 0
    fi
    # pcloud-manage also exits 1 when the pass went through and only some
    # providers were not mirrored (its PROBLEM lines, after the summary):
    # a warning, as blazar-manager's own passes retry them. A pass that
    # did not go through (an ERROR on stderr, no summary) stops stack.sh.
    lines=$'\n'$output
    if [[ $lines == *$'\n'"deleted: "* && $lines == *$'\n'"PROBLEM "* ]]; then
        msg="pcloud-manage placement sync mirrored Placement with problems"
        msg+=" (the PROBLEM lines above); blazar-manager retries them on its"
        msg+=" periodic pass"
        warn $LINENO "$msg"
        return 0
    fi
    die $LINENO "pcloud-manage placement sync failed (exit status" \
        "$status): the first mirror of Placement into the ledger"
}

function clean_pcloud_blazar {
    # The ledger's database goes with DevStack's own (clean.sh drops the
    # database server after the plugins' clean); our options and plugins
    # go from blazar.conf, which Blazar's plugin never removes.
    local conf=$PCLOUD_BLAZAR_CONF group option plugins
    if [[ ! -f $conf ]]; then
        return
    fi
    if ini_has_option "$conf" manager plugins; then
        plugins=$(iniget "$conf" manager plugins)
        iniset "$conf" manager plugins "$(_pcloud_unmerged_plugins "$plugins")"
    fi
    inidelete "$conf" pcloud_database connection
    inidelete "$conf" pcloud blazar_freepool_name
    for group in pcloud_nova pcloud_placement; do
        for option in auth_type auth_url username password user_domain_name \
                project_name project_domain_name region_name; do
            inidelete "$conf" "$group" "$option"
        done
    done
    for option in auth_type auth_url username password user_domain_name \
            system_scope endpoint_id; do
        inidelete "$conf" oslo_limit "$option"
    done
}

if is_service_enabled pcloud-plugin; then
    if [[ "$1" == "stack" ]]; then
        pcloud_require_blazar_plugin
    fi

    if [[ "$1" == "stack" && "${2:-}" == "install" ]]; then
        echo_summary "Installing pcloud-plugin"
        install_pcloud_plugin
    elif [[ "$1" == "stack" && "${2:-}" == "post-config" ]]; then
        echo_summary "Configuring pcloud-plugin"
        if is_service_enabled n-sch; then
            configure_pcloud_nova_scheduler
        fi
        if is_service_enabled blazar-a blazar-m; then
            create_pcloud_accounts
            if _pcloud_blazar_plugin_runs_first; then
                configure_pcloud_blazar_and_ledger
            fi
        fi
    elif [[ "$1" == "stack" && "${2:-}" == "extra" ]]; then
        if is_service_enabled n-sch; then
            check_pcloud_nova_scheduler
        fi
        if is_service_enabled blazar-a blazar-m &&
                ! _pcloud_blazar_plugin_runs_first; then
            echo_summary "Configuring pcloud-plugin in Blazar"
            configure_pcloud_blazar_and_ledger
        fi
    elif [[ "$1" == "stack" && "${2:-}" == "test-config" ]]; then
        if is_service_enabled blazar-m; then
            echo_summary "Mirroring Placement into the pcloud ledger"
            init_pcloud_mirror
        fi
    fi

    if [[ "$1" == "unstack" ]]; then
        # Nothing of ours runs: our code stops with nova-scheduler and
        # Blazar, which their own plugins stop.
        :
    fi

    if [[ "$1" == "clean" ]]; then
        if is_service_enabled blazar-a blazar-m; then
            echo_summary "Cleaning pcloud-plugin"
            clean_pcloud_blazar
        fi
    fi
fi
