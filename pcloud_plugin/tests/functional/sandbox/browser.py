# Copyright 2026 The pcloud-plugin Authors
#
#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.
"""A real browser on the sandbox's dashboard: Debian's headless Chromium

driven by Selenium through Debian's chromedriver (tools/browser.sh
installs both where they are missing). When a test fails, each page it
saw is kept as a screenshot and its HTML in ``$PCLOUD_BROWSER_ARTEFACTS``
(default: pcloud-browser-artefacts in the temporary directory), the
screenshots also in the test's details.
"""

import os
import re
import shutil
import tempfile
import time

import fixtures
from selenium.common import exceptions as selenium_exceptions
from selenium import webdriver
from selenium.webdriver.chrome import service as chrome_service
from selenium.webdriver.common.by import By
from testtools import content

from pcloud_plugin.sandbox import common

CHROMIUM = '/usr/bin/chromium'
CHROMEDRIVER = '/usr/bin/chromedriver'
ARTEFACTS = 'PCLOUD_BROWSER_ARTEFACTS'
# Where doc/tools/capture_dashboard.sh has the user guide's pictures
# written (``picture``); unset, none are.
PICTURES = 'PCLOUD_DASHBOARD_PICTURES'
# What this machine's closed network needs: no calls home, no sandbox
# (the tests run as root), no GPU.
FLAGS = ('--headless', '--no-sandbox', '--disable-gpu',
         '--disable-dev-shm-usage', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--disable-quic',
         '--no-first-run', '--window-size=1400,1000')


def missing():
    """Why no browser can run here, or None."""
    absent = [path for path in (CHROMIUM, CHROMEDRIVER)
              if not os.path.exists(path)]
    if absent:
        return ('%s missing: tools/browser.sh installs Debian\'s chromium '
                'and chromium-driver' % ', '.join(absent))
    return None


class Browser(fixtures.Fixture):
    """``driver`` on the sandbox's dashboard; ``login(user)``, ``open(path)``

    and ``seen(name)`` (a screenshot of the page, kept if the test fails).
    """

    def __init__(self, test, sandbox):
        super().__init__()
        self.test = test
        self.base = sandbox.dashboard_url().rstrip('/')
        self.pages = []

    def _setUp(self):
        profile = tempfile.mkdtemp(prefix='pcloud-chromium-')
        self.addCleanup(shutil.rmtree, profile, ignore_errors=True)
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in FLAGS + ('--user-data-dir=%s' % profile,):
            options.add_argument(flag)
        self.driver = webdriver.Chrome(
            service=chrome_service.Service(CHROMEDRIVER), options=options)
        self.addCleanup(self.driver.quit)
        self.driver.set_page_load_timeout(120)
        self.test.addOnException(self._keep_pages)

    def open(self, path):
        self.driver.get(self.base + path)
        self.seen(path)

    def login(self, user):
        """Sign in as ``user`` (of the sandbox), signed out first."""
        self.driver.delete_all_cookies()
        self.open('/auth/login/')
        # Once, a rehearsal's page had no form here (its HTML went with
        # the run): tried again, and what showed instead said if not.
        self.wait('the login form', lambda: self.find_all('#id_username'),
                  reload=True)
        self.find('#id_username').send_keys(user)
        self.find('#id_password').send_keys(common.PASSWORD)
        self.find('#loginBtn, button[type=submit]').click()
        self.wait('signed in as %s' % user,
                  lambda: '/auth/login' not in self.driver.current_url)

    def find(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def text(self):
        return self.find('body').text

    def wait(self, what, condition, timeout=60, reload=False):
        """Until condition() is true (the page reloaded between tries if

        ``reload``); fails naming ``what``.
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                if condition():
                    return
            except selenium_exceptions.NoSuchElementException:
                pass
            if time.monotonic() > deadline:
                self.seen('timeout')
                self.test.fail('the dashboard did not show %s within %ds; '
                               'it showed: %s' % (what, timeout,
                                                  self.text()[:1000]))
            time.sleep(1)
            if reload:
                self.driver.refresh()

    def seen(self, name):
        """Keep the page as it is now, under ``name``."""
        self.pages.append((name, self.driver.get_screenshot_as_png(),
                           self.driver.page_source))

    def picture(self, name):
        """The page as the user guide shows it, when pictures are asked

        for: ``$PCLOUD_DASHBOARD_PICTURES/dashboard-<name>.png``.
        """
        folder = os.environ.get(PICTURES)
        if folder:
            self.driver.save_screenshot(
                os.path.join(folder, 'dashboard-%s.png' % name))

    def _keep_pages(self, exc_info):
        """Every page seen, as PNG and HTML files, and the screenshots in

        the test's details too (stestr keeps them in its stream).
        """
        keep = os.environ.get(ARTEFACTS) or os.path.join(
            tempfile.gettempdir(), 'pcloud-browser-artefacts')
        os.makedirs(keep, exist_ok=True)
        for n, (name, png, html) in enumerate(self.pages):
            label = '%02d-%s' % (n, re.sub(r'[^A-Za-z0-9]+', '-', name))
            self.test.addDetail(label + '.png', content.Content(
                content.ContentType('image', 'png'), lambda png=png: [png]))
            prefix = os.path.join(keep, '%s-%s' % (self.test.id(), label))
            with open(prefix + '.png', 'wb') as f:
                f.write(png)
            with open(prefix + '.html', 'w') as f:
                f.write(html)
        self.test.addDetail('browser-artefacts', content.text_content(
            'the pages seen, as PNG and HTML: %s' % keep))
