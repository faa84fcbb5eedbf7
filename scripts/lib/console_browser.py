"""The operator console in headless Chromium (scripts/console-browser-test runs this)."""
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.dirname(__file__))
from api import API  # noqa: E402

BASE, LINK = sys.argv[1], sys.argv[2].strip()
SHOTS = os.environ.get("SCREENSHOTS", ".build/console-screenshots")
REX = "<b>Rex</b>"
NOTE = "<img src=x onerror=alert(1)>"
PASSWORD = "a long operator password"
os.makedirs(SHOTS, exist_ok=True)
started = time.monotonic()


def check(condition, message):
    if not condition:
        raise SystemExit("FAILED: " + message)
    print("ok  " + message)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


plain = urllib.request.build_opener(NoRedirect)


def raw(method, path, fields=None, headers=None):
    """A request outside the browser; returns (status, headers, body)."""
    data = urllib.parse.urlencode(fields).encode() if fields is not None else None
    request = urllib.request.Request(BASE + path, data=data, method=method, headers=headers or {})
    try:
        with plain.open(request, timeout=10) as reply:
            return reply.status, reply.headers, reply.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


# Seed through the HTTP API: Ben's dog is named in HTML, Ana reports him with an HTML note.
api = API(BASE)
status, _, ana = api.call("POST", "/v1/users", {
    "nickname": "ana" + str(os.getpid()), "dog_name": "Kongsu", "age": 3, "sex": "female", "neutered": True,
    "size": "small", "keywords": ["smart"], "profile_image": None})
check(status == 201, "Ana signs up")
status, _, ben = api.call("POST", "/v1/users", {
    "nickname": "ben" + str(os.getpid()), "dog_name": REX, "age": 4, "sex": "male", "neutered": False,
    "size": "medium", "keywords": ["friendly"], "profile_image": None})
check(status == 201, "Ben signs up with a dog named %s" % REX)
ana, ben = (ana["user_id"], ana["token"]), (ben["user_id"], ben["token"])


def upload_photo(user, rgb):
    """A JPEG of coloured noise (made with libvips' command line) as the user's card photo."""
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        bands = []
        for index, mean in enumerate(rgb):
            band = os.path.join(folder, "%d.v" % index)
            subprocess.run(["vips", "gaussnoise", band, "240", "240", "--mean", str(mean), "--sigma", "25"], check=True)
            bands.append(band)
        joined = os.path.join(folder, "rgb.v")
        subprocess.run(["vips", "bandjoin", " ".join(bands), joined], check=True)
        photo = os.path.join(folder, "photo.jpg")
        subprocess.run(["vips", "cast", joined, photo, "uchar"], check=True)
        data = open(photo, "rb").read()
    request = urllib.request.Request(BASE + "/v1/me/photo", data=data, method="PUT",
                                     headers={"Content-Type": "image/jpeg", "Authorization": "Bearer " + user[1]})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return reply.status


check(upload_photo(ana, (215, 160, 90)) in (200, 201) and upload_photo(ben, (80, 140, 215)) in (200, 201), "both users upload a card photo")
api.make_mates(ana, ben)
status, _, report = api.call("POST", "/v1/reports", {"user_id": ben[0], "reason": "harassment", "note": NOTE}, token=ana[1])
check(status == 201, "Ana reports Ben with the note %s" % NOTE)
report_id = report["report_id"]

options = webdriver.ChromeOptions()
for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,900"]:
    options.add_argument(argument)
driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path="/usr/bin/chromedriver"), options=options)
driver.implicitly_wait(2)
shot_number = [0]


def shot(name):
    shot_number[0] += 1
    path = os.path.join(SHOTS, "%02d-%s.png" % (shot_number[0], name))
    driver.save_screenshot(path)


def no_dialog(where):
    try:
        alert = driver.switch_to.alert
        text = alert.text
        alert.dismiss()
        raise SystemExit("FAILED: a dialog opened on %s: %s" % (where, text))
    except NoAlertPresentException:
        print("ok  no dialog opened on " + where)


def gone(element):
    """A wait condition: `element` no longer belongs to the page. Selenium's staleness_of knows
    only StaleElementReferenceException; chromedriver also answers a lookup in a document that
    is being replaced with an "unknown error" (Node with given id does not belong to the
    document), which means the same."""
    def condition(_):
        try:
            element.is_enabled()
            return False
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            if "does not belong to the document" in str(error):
                return True
            raise
    return condition


def submit(form_selector, fields=None):
    """Fills and submits a form, then waits until the answer's page has replaced this one."""
    form = driver.find_element(By.CSS_SELECTOR, form_selector)
    for name, value in (fields or {}).items():
        element = form.find_element(By.NAME, name)
        element.clear()
        element.send_keys(value)
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(driver, 10).until(gone(form))
    WebDriverWait(driver, 10).until(lambda d: d.execute_script("return document.readyState") == "complete")


try:
    # Signed out, the console is the sign-in page.
    driver.get(BASE + "/console/reports")
    check(driver.current_url.endswith("/console/sign-in"), "signed out, /console/reports is the sign-in page")

    # The link from `sniffmeet operators add` sets the password.
    driver.get(LINK)
    check("mina" in driver.page_source, "the link names the operator")
    shot("set-password")
    submit("form[action='/console/set-password']", {"password": PASSWORD, "confirm": PASSWORD})
    check("/console/sign-in" in driver.current_url, "setting the password leads to the sign-in page")
    shot("sign-in")
    submit("form[action='/console/sign-in']", {"name": "mina", "password": PASSWORD})
    check(driver.current_url.endswith("/console/reports"), "mina signs in and sees the open reports")
    no_dialog("the reports page")
    shot("reports")
    body = driver.find_element(By.TAG_NAME, "main").text
    check(REX in body, "the dog's name shows as the text %s" % REX)
    check(NOTE in body, "the note shows as the text %s" % NOTE)
    check(not driver.find_elements(By.CSS_SELECTOR, "main b"), "no <b> element came from the dog's name")
    check(not driver.find_elements(By.CSS_SELECTOR, "img[src='x']"), "no <img> element came from the note")
    photos = driver.find_elements(By.CSS_SELECTOR, "#report-%s .card img" % report_id)
    check(len(photos) == 2 and all(driver.execute_script("return arguments[0].naturalWidth", p) > 0 for p in photos),
          "both cards show their photos")
    cookie = driver.get_cookie("sniffmeet_console")
    check(cookie is not None and cookie["httpOnly"] and cookie.get("sameSite") == "Strict" and cookie["path"] == "/console",
          "the session cookie is HttpOnly, SameSite=Strict, Path=/console")
    session = "sniffmeet_console=" + cookie["value"]
    csrf = driver.find_element(By.CSS_SELECTOR, "input[name=csrf]").get_attribute("value")

    # Forms without their CSRF token, or from another site, are refused.
    status, _, _ = raw("POST", "/console/reports/%s/resolve" % report_id, {}, {"Cookie": session})
    check(status == 403, "a form posted without its CSRF token is refused (%d)" % status)
    status, _, _ = raw("POST", "/console/reports/%s/resolve" % report_id, {"csrf": csrf},
                       {"Cookie": session, "Origin": "https://evil.example"})
    check(status == 403, "a form posted from another site's Origin is refused (%d)" % status)
    status, headers, _ = raw("GET", "/console/reports", headers={"Cookie": session})
    check(status == 200 and "default-src 'none'" in headers.get("Content-Security-Policy", "")
          and headers.get("X-Frame-Options") == "DENY", "pages carry the security headers")

    # The user: suspend, and their token stops working through the API within a second.
    driver.find_element(By.CSS_SELECTOR, "#report-%s .cards a.dog" % report_id).click()
    check(driver.current_url.endswith("/console/users/" + ben[0]), "the reported dog's link opens the user")
    no_dialog("the user page")
    shot("user")
    status, _, _ = api.call("GET", "/v1/me", token=ben[1])
    check(status == 200, "Ben's token works before the suspension")
    # Ben's phone asks all along, from the moment the button is pressed.
    import threading
    refused = {}

    def ask():
        while time.monotonic() - clicked < 3:
            status, _, _ = api.call("GET", "/v1/me", token=ben[1])
            if status == 401:
                refused["after"] = time.monotonic() - clicked
                return
            time.sleep(0.02)

    clicked = time.monotonic()
    phone = threading.Thread(target=ask)
    phone.start()
    submit("form[action$='/suspend']", {"reason": "threats in the walk messages"})
    phone.join()
    status = 401 if "after" in refused else 200
    took = refused.get("after", 99)
    check(status == 401 and took < 1.0,
          "Ben's token is 401 through the API %.0f ms after the Suspend button was pressed" % (took * 1000))
    shot("user-suspended")
    submit("form[action$='/lift']")
    check("Suspend" in driver.find_element(By.CSS_SELECTOR, "form[action$='/suspend'] button").text, "the suspension is lifted")

    # Resolve the report.
    driver.get(BASE + "/console/reports")
    submit("#report-%s form[action$='/resolve']" % report_id)
    check(report_id not in driver.page_source, "the resolved report left the open reports")

    # The audit log names mina for each action.
    deadline = time.monotonic() + 5
    while True:
        driver.get(BASE + "/console/audit")
        rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "table.audit tr")[1:]]
        done = {action for action in ("suspend", "lift", "resolve") if any(" mina %s " % action in " %s " % row for row in rows)}
        if len(done) == 3 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    check(done == {"suspend", "lift", "resolve"}, "the audit log shows mina's suspend, lift and resolve")
    shot("audit")
    driver.get(BASE + "/console/projections")
    check(len(driver.find_elements(By.CSS_SELECTOR, ".charts img")) >= 8, "the projections page shows a lag chart per projector")
    shot("projections")
    driver.get(BASE + "/console/push")
    shot("push")

    # Signing out ends the session: the old cookie opens nothing any more.
    submit("form.signout")
    check(driver.current_url.endswith("/console/sign-in"), "signing out leads to the sign-in page")
    status, headers, body = raw("GET", "/console/reports", headers={"Cookie": session})
    check(status == 303 and headers.get("Location") == "/console/sign-in" and not body,
          "the ended session's cookie is redirected to the sign-in page, no data")
    driver.get(BASE + "/console/audit")
    check(driver.current_url.endswith("/console/sign-in"), "the browser is signed out")
    shot("signed-out")
finally:
    driver.quit()
print("console browser test passed in %.1f s; screenshots in %s" % (time.monotonic() - started, SHOTS))
