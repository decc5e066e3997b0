#!/bin/bash
# shellcheck disable=SC2034
# (the globals below are DevStack's, for the plugin.sh this sources)
# A stand-in for DevStack, enough to run devstack/plugin.sh outside it
# (pcloud_plugin/tests/unit/test_devstack_plugin.py). Our own small
# versions of the DevStack functions plugin.sh calls: the ini functions
# edit real files, the others only record their call; and a fake Blazar
# plugin that does to nova.conf and blazar.conf what Blazar's does.
#
#   STUB_DIR=<dir> DEVSTACK_PLUGINS=blazar,pcloud-plugin \
#   ENABLED_SERVICES=n-sch,n-cpu,blazar-a,blazar-m \
#       bash stub-devstack.sh stack [PHASE ...]   (default: every phase)
#       bash stub-devstack.sh unstack|clean
#
# ENABLED_SERVICES is the node's list once every settings file is read.
# In STUB_DIR: nova.conf and blazar.conf; calls, one line per recorded
# call or DevStack step, in order; nova.conf.started and
# blazar.conf.started, copies taken when nova-scheduler and Blazar start
# (nova.conf.started again when nova-scheduler restarts).
# STUB_BLAZAR_PLUGINS replaces the list Blazar's plugin writes;
# STUB_BLAZAR_CONFIGURES=no makes it configure nothing. Also, as
# local.conf would set them: BLAZAR_FREEPOOL_NAME, PCLOUD_* (settings),
# STUB_PCLOUD_GITDIR (GITDIR[pcloud-plugin], where enable_plugin's
# checkout is) and STUB_NOVA_POST_CONFIG (the lines of local.conf's
# [[post-config|$NOVA_CONF]] section, merged after the plugins'
# post-config as stack.sh does). STUB_PLACEMENT_SYNC: what the fake
# pcloud-manage placement sync does, ok (default), problems (a pass that
# went through with a PROBLEM line, exit 1 as the real one) or error (an
# ERROR on stderr, exit 1).

set -o errexit -o nounset

PLUGIN_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STUB_DIR=${STUB_DIR:?STUB_DIR must name a directory}
DEVSTACK_PLUGINS=${DEVSTACK_PLUGINS:-blazar,pcloud-plugin}
ENABLED_SERVICES=${ENABLED_SERVICES:-}
STUB_BLAZAR_CONFIGURES=${STUB_BLAZAR_CONFIGURES:-yes}

DEST=$STUB_DIR/opt
# enable_plugin's checkouts: $DEST/<name>, or where local.conf said.
declare -A GITDIR=()
for _stub_plugin in ${DEVSTACK_PLUGINS//,/ }; do
    GITDIR[$_stub_plugin]=$DEST/$_stub_plugin
done
if [[ -n ${STUB_PCLOUD_GITDIR:-} ]]; then
    GITDIR[pcloud-plugin]=$STUB_PCLOUD_GITDIR
fi
DATABASE_BACKENDS=" mysql postgresql"
NOVA_CONF=$STUB_DIR/nova.conf
NOVA_FILTERS=ComputeFilter,ComputeCapabilitiesFilter,ImagePropertiesFilter
KEYSTONE_SERVICE_URI=http://127.0.0.1/identity
SERVICE_PASSWORD=secretservice
SERVICE_DOMAIN_NAME=Default
SERVICE_PROJECT_NAME=service
REGION_NAME=RegionOne

function _stub_record {
    echo "$*" >> "$STUB_DIR/calls"
}

# -- ini files ---------------------------------------------------------

# Every value of option $3 in section [$2] of file $1, one a line.
function _stub_ini_values {
    if [[ ! -f $1 ]]; then
        return 0
    fi
    awk -v section="[$2]" -v option="$3" '
        /^\[/ { inside = ($0 == section); next }
        inside && match($0, "^" option "[ \t]*=[ \t]*") {
            print substr($0, RLENGTH + 1)
        }' "$1"
}

# Option $3 of section [$2] in file $1 becomes one line per further
# argument (none: the option goes), in place of its old lines.
function _stub_ini_write {
    local file=$1 section=$2 option=$3
    shift 3
    touch "$file"
    STUB_VALUES=$(printf '%s\n' "$@") awk -v section="[$section]" \
            -v option="$option" -v count=$# '
        function emit(  i) {
            for (i = 1; i <= count; i++) print option " = " values[i]
        }
        BEGIN { split(ENVIRON["STUB_VALUES"], values, "\n") }
        /^\[/ {
            inside = ($0 == section)
            print
            if (inside && !done) { emit(); done = 1 }
            next
        }
        inside && $0 ~ ("^" option "[ \t]*=") { next }
        { print }
        END { if (!done && count) { print ""; print section; emit() } }
        ' "$file" > "$file.new"
    mv "$file.new" "$file"
}

function iniget {
    _stub_ini_values "$1" "$2" "$3" | paste -sd ' '
}

function iniget_multiline {
    _stub_ini_values "$1" "$2" "$3" | paste -sd ' '
}

function ini_has_option {
    if [[ $1 == -sudo ]]; then
        shift
    fi
    [[ -n $(_stub_ini_values "$1" "$2" "$3") ]]
}

function iniset {
    if [[ $1 == -sudo ]]; then
        shift
    fi
    _stub_ini_write "$1" "$2" "$3" "$4"
}

function iniset_multiline {
    if [[ $1 == -sudo ]]; then
        shift
    fi
    _stub_ini_write "$@"
}

function iniadd {
    if [[ $1 == -sudo ]]; then
        shift
    fi
    local file=$1 section=$2 option=$3 old
    shift 3
    local -a values=()
    while IFS= read -r old; do
        values+=("$old")
    done < <(_stub_ini_values "$file" "$section" "$option")
    _stub_ini_write "$file" "$section" "$option" "${values[@]}" "$@"
}

function inidelete {
    if [[ $1 == -sudo ]]; then
        shift
    fi
    _stub_ini_write "$1" "$2" "$3"
}

# -- services, plugins, keystone, database, packages -------------------

function is_service_enabled {
    local service
    for service in "$@"; do
        if [[ ",$ENABLED_SERVICES," == *",$service,"* ]]; then
            return 0
        fi
    done
    return 1
}

function enable_service {
    local service
    for service in "$@"; do
        if ! is_service_enabled "$service"; then
            ENABLED_SERVICES+=",$service"
        fi
    done
}

function is_plugin_enabled {
    [[ ",$DEVSTACK_PLUGINS," == *",$1,"* ]]
}

function define_plugin {
    _stub_record define_plugin "$@"
}

function plugin_requires {
    _stub_record plugin_requires "$@"
}

function die {
    local line=$1
    shift
    _stub_record die "$*"
    echo "[ERROR] line $line: $*" >&2
    exit 1
}

# As DevStack's: the message is the second argument (no more), and the
# status of the command before is kept.
function warn {
    local status=$?
    _stub_record warn "$2"
    echo "[WARNING] line $1: $2" >&2
    return $status
}

function echo_summary {
    echo "$*"
}

function trueorfalse {
    local value=${!2:-$1}
    case ${value,,} in
        1|yes|true|on) echo True ;;
        *) echo False ;;
    esac
}

function restart_service {
    _stub_record restart_service "$@"
    if [[ $1 == devstack@n-sch.service ]]; then
        cp "$NOVA_CONF" "$STUB_DIR/nova.conf.started"
    fi
}

# The openstack client: records its call; an endpoint list answers the
# endpoints Blazar's plugin registered (in $STUB_DIR/endpoints: type and
# id a line).
function openstack {
    local service=""
    _stub_record openstack "$@"
    if [[ " $* " == *" endpoint list "* ]]; then
        while [[ $# -gt 0 ]]; do
            if [[ $1 == --service ]]; then
                service=$2
            fi
            shift
        done
        if [[ -f $STUB_DIR/endpoints ]]; then
            awk -v service="$service" '$1 == service { print $2 }' \
                "$STUB_DIR/endpoints"
        fi
    fi
}

function get_python_exec_prefix {
    echo "$STUB_DIR/bin"
}

function setup_develop {
    _stub_record setup_develop "$@"
}

function recreate_database {
    _stub_record recreate_database "$@"
}

function database_connection_url {
    echo "mysql+pymysql://root:secretdatabase@127.0.0.1/$1?charset=utf8"
}

function get_or_create_user {
    _stub_record get_or_create_user "$@"
    echo "id-of-$1"
}

function get_or_add_user_project_role {
    _stub_record get_or_add_user_project_role "$@"
    echo "id-of-$1"
}

# -- Blazar's plugin, as far as these files go ------------------------

function _stub_blazar_settings {
    BLAZAR_CONF_FILE=$STUB_DIR/blazar.conf
    BLAZAR_FREEPOOL_NAME=${BLAZAR_FREEPOOL_NAME:-freepool}
}

function _stub_blazar_plugin {
    local mode=$1 phase=${2:-} filters
    if ! is_service_enabled blazar blazar-a blazar-m; then
        return 0
    fi
    if [[ $mode/$phase == stack/post-config ]]; then
        _stub_record blazar post-config
        if [[ $STUB_BLAZAR_CONFIGURES != yes ]]; then
            return 0
        fi
        iniset "$BLAZAR_CONF_FILE" manager plugins \
            "${STUB_BLAZAR_PLUGINS:-physical.host.plugin,virtual.instance.plugin,virtual.floatingip.plugin,flavor.instance.plugin}"
        iniset "$BLAZAR_CONF_FILE" database connection \
            "$(database_connection_url blazar)"
        iniset "$BLAZAR_CONF_FILE" physical:host aggregate_freepool_name \
            "$BLAZAR_FREEPOOL_NAME"
        # Its Keystone service and endpoints (once, in Keystone).
        if ! grep -qs '^reservation ' "$STUB_DIR/endpoints"; then
            echo "reservation id-of-blazar-endpoint" >> "$STUB_DIR/endpoints"
        fi
        # Nova's filters: BlazarFilter enabled; all_filters offered only
        # when nothing is offered yet.
        filters=$(iniget "$NOVA_CONF" filter_scheduler enabled_filters)
        if [[ $filters != *BlazarFilter* ]]; then
            iniset "$NOVA_CONF" filter_scheduler enabled_filters \
                "${filters:+$filters,}BlazarFilter"
        fi
        if [[ -z $(iniget "$NOVA_CONF" filter_scheduler available_filters) ]]; then
            iniset "$NOVA_CONF" filter_scheduler available_filters \
                nova.scheduler.filters.all_filters
        fi
        iniadd "$NOVA_CONF" filter_scheduler available_filters \
            blazarnova.scheduler.filters.blazar_filter.BlazarFilter
    elif [[ $mode/$phase == stack/extra ]]; then
        _stub_record start blazar
        if [[ -f $BLAZAR_CONF_FILE ]]; then
            cp "$BLAZAR_CONF_FILE" "$STUB_DIR/blazar.conf.started"
        fi
    fi
}

# -- DevStack's steps ---------------------------------------------------

function _stub_run_plugins {
    local plugin
    for plugin in ${DEVSTACK_PLUGINS//,/ }; do
        if [[ $plugin == blazar ]]; then
            _stub_blazar_plugin "$@"
        elif [[ $plugin == pcloud-plugin ]]; then
            # shellcheck source=/dev/null
            source "$PLUGIN_DIR/plugin.sh" "$@"
        fi
    done
}

function _stub_load_plugin_settings {
    local plugin
    for plugin in ${DEVSTACK_PLUGINS//,/ }; do
        if [[ $plugin == blazar ]]; then
            _stub_blazar_settings
        elif [[ $plugin == pcloud-plugin ]]; then
            # shellcheck source=/dev/null
            source "$PLUGIN_DIR/settings"
        fi
    done
}

# local.conf's [[post-config|$NOVA_CONF]]: each option it names takes
# the values it gives there, in place of the file's.
function _stub_merge_nova_post_config {
    local line section="" option value key
    local -a keys=() lines=()
    local -A merged=()
    while IFS= read -r line; do
        if [[ $line =~ ^\[(.*)\]$ ]]; then
            section=${BASH_REMATCH[1]}
        elif [[ $line =~ ^([^=[:space:]]+)[[:space:]]*=[[:space:]]*(.*)$ ]]; then
            option=${BASH_REMATCH[1]}
            value=${BASH_REMATCH[2]}
            key="$section $option"
            if [[ -z ${merged[$key]+set} ]]; then
                keys+=("$key")
                merged[$key]=$value
            else
                merged[$key]+=$'\n'$value
            fi
        fi
    done <<< "${STUB_NOVA_POST_CONFIG:-}"
    for key in "${keys[@]}"; do
        mapfile -t lines <<< "${merged[$key]}"
        _stub_ini_write "$NOVA_CONF" "${key% *}" "${key#* }" "${lines[@]}"
    done
}

function _stub_nova_runs_here {
    [[ ",$ENABLED_SERVICES" == *,n-* ]]
}

function _stub_stack {
    local phase
    local -a phases=("$@")
    if [[ ${#phases[@]} == 0 ]]; then
        phases=(install post-config extra test-config)
    fi
    if _stub_nova_runs_here; then
        # configure_nova writes nova.conf anew on every stack.
        rm -f "$NOVA_CONF"
        iniset "$NOVA_CONF" filter_scheduler enabled_filters "$NOVA_FILTERS"
    fi
    for phase in "${phases[@]}"; do
        _stub_run_plugins stack "$phase"
        if [[ $phase == post-config ]]; then
            if [[ -n ${STUB_NOVA_POST_CONFIG:-} ]] && _stub_nova_runs_here; then
                _stub_record merge local.conf post-config
                _stub_merge_nova_post_config
            fi
            if is_service_enabled n-sch; then
                _stub_record start nova-scheduler
                cp "$NOVA_CONF" "$STUB_DIR/nova.conf.started"
            fi
            if is_service_enabled n-cpu; then
                _stub_record start nova-compute
            fi
        elif [[ $phase == extra ]] && is_service_enabled n-cpu; then
            _stub_record is_nova_ready
        fi
    done
}

mkdir -p "$STUB_DIR/bin"
cat > "$STUB_DIR/bin/pcloud-manage" <<EOF
#!/bin/bash
echo "pcloud-manage \$*" >> "$STUB_DIR/calls"
if [[ "\$*" == *"placement sync" ]]; then
    case "${STUB_PLACEMENT_SYNC:-ok}" in
        problems)
            echo "created: 1 c0ffee00-0000-4000-8000-000000000001"
            echo "updated: 0 "
            echo "deleted: 0 "
            echo "PROBLEM c0ffee00-0000-4000-8000-000000000002: not mirrored"
            exit 1 ;;
        error)
            echo "ERROR: cannot reach Placement with [pcloud_placement]" >&2
            exit 1 ;;
    esac
    echo "created: 0 "
    echo "updated: 0 "
    echo "deleted: 0 "
fi
EOF
chmod +x "$STUB_DIR/bin/pcloud-manage"

mode=${1:?stack, unstack or clean}
shift
_stub_load_plugin_settings
if [[ $mode == stack ]]; then
    _stub_stack "$@"
else
    _stub_run_plugins "$mode"
fi
