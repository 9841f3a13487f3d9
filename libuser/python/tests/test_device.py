# SPDX-License-Identifier: MIT
"""The bindings end to end against libamdqp on the in-memory fake device
(libuser/testing/fake_amdqp/demo_c.cpp describes its fixed world)."""
import ctypes
import unittest

import amdqp
from support import require_env


class FakeDevice(unittest.TestCase):
    def setUp(self):
        self.fake = ctypes.CDLL(require_env("AMDQP_FAKE_DEMO"))
        self.fake.amdqp_fake_open_demo.restype = ctypes.c_void_p
        self.fake.amdqp_fake_demo_add_queue.argtypes = [
            ctypes.c_uint, ctypes.c_uint, ctypes.c_ulonglong, ctypes.c_uint]
        self.fake.amdqp_fake_demo_holders.argtypes = [ctypes.c_uint] * 3
        handle = self.fake.amdqp_fake_open_demo()
        self.assertTrue(handle)
        self.dev = amdqp.Device._adopt(handle)

    def tearDown(self):
        self.dev.close()

    def holders(self, pid, gpu, queue):
        return self.fake.amdqp_fake_demo_holders(pid, gpu, queue)

    def test_version_and_devices(self):
        self.assertEqual(self.dev.version()["abi_major"], 1)
        gpus = self.dev.devices()
        self.assertEqual([g.gpu_id for g in gpus], [1, 2])
        self.assertEqual([g.sched_mode for g in gpus], [1, 2])
        self.assertEqual(gpus[0].num_queues, 2)

    def test_queues_and_filters(self):
        qs = self.dev.queues()
        self.assertEqual(len(qs), 4)
        self.assertEqual(qs[0], qs[0])  # plain data
        self.assertEqual((qs[0].pid, qs[0].ring_va, qs[0].priority), (4242, 0x10000, 12))
        self.assertEqual(len(self.dev.queues(gpu=1)), 2)
        self.assertEqual(len(self.dev.queues(pid=4343)), 2)
        self.assertEqual(len(self.dev.queues(gpu=2, pid=4242)), 0)

    def test_lookup(self):
        q = self.dev.find_queue(4343, ring_va=0x30000)
        self.assertEqual((q.gpu_id, q.queue_id), (2, 1))
        q = self.dev.find_queue(4242, gpu=1, queue=1)
        self.assertEqual(q.ring_va, 0x10000)
        self.assertIsNone(self.dev.find_queue(4242, ring_va=0x30000))
        self.assertIsNone(self.dev.find_queue(9999, gpu=1, queue=1))
        with self.assertRaises(amdqp.InvalidError):
            self.dev.find_queue(4242)

    def test_set_priority(self):
        self.dev.set_priority(amdqp.QueueRef(4343, ring_va=0x20000), "low")
        self.dev.set_priority((4343, 1, 2), 1)
        self.assertEqual(self.dev.find_queue(4343, gpu=1, queue=2).priority, 1)
        with self.assertRaises(amdqp.PermissionDeniedError) as cm:
            self.dev.set_priority((4343, 1, 2), "high")
        self.assertIn("CAP_SYS_NICE", str(cm.exception))
        with self.assertRaises(amdqp.NoQueueError):
            self.dev.set_priority((4343, 1, 77), "low")
        with self.assertRaises(amdqp.InvalidError):
            self.dev.set_priority((4343, 1, 2), "urgent")

    def test_suspend_and_resume(self):
        targets = [amdqp.QueueRef(4343, 1, 2), amdqp.QueueRef(4444, 2, 2),
                   amdqp.QueueRef(4343, ring_va=0x30000)]
        res = self.dev.suspend(targets)
        self.assertEqual([r.ok for r in res], [True, False, True])
        self.assertEqual(res[1].code, "permission")
        self.assertEqual(res[1].errno, 1)  # EPERM
        self.assertIn("CAP_SYS_ADMIN", res[1].message)
        self.assertTrue(res[0].state & amdqp.QUEUE_HELD)
        self.assertEqual(self.holders(4343, 1, 2), 1)
        self.assertEqual(self.holders(4343, 2, 1), 1)
        self.assertTrue(self.dev.find_queue(4343, gpu=1, queue=2).suspended)

        res = self.dev.resume(q for q in self.dev.queues(pid=4343))
        self.assertEqual([r.ok for r in res], [True, True])
        self.assertEqual(self.holders(4343, 1, 2), 0)
        self.assertEqual(self.dev.suspend([]), [])

    def test_holds_end_with_the_device(self):
        self.dev.suspend([(4343, 1, 2)])
        self.assertEqual(self.holders(4343, 1, 2), 1)
        self.dev.close()
        self.assertEqual(self.holders(4343, 1, 2), 0)
        with self.assertRaises(amdqp.InvalidError):
            self.dev.queues()

    def test_suspend_below_and_resume_all(self):
        self.assertEqual(self.dev.suspend_below("high", gpus=[1]), (1, 0))
        self.assertEqual(self.holders(4343, 1, 2), 1)
        self.assertEqual(self.holders(4242, 1, 1), 0)
        self.assertEqual(self.holders(4343, 2, 1), 0)
        self.assertEqual(self.dev.resume_all(), 1)
        self.assertEqual(self.holders(4343, 1, 2), 0)
        # Every GPU: pid 4444's queue belongs to another user: skipped.
        self.assertEqual(self.dev.suspend_below(16), (3, 1))
        with self.assertRaises(amdqp.NoGpuError) as cm:
            self.dev.suspend_below(8, gpus=[9])
        self.assertIn("unknown GPU id 9", str(cm.exception))

    def test_events(self):
        self.assertGreaterEqual(self.dev.subscribe(), 0)
        self.assertEqual(self.dev.read_events(0), [])
        self.fake.amdqp_fake_demo_add_queue(5000, 2, 0x50000, 7)
        self.dev.set_priority((4343, 1, 2), 0)
        evs = list(self.dev.events(timeout=0))
        self.assertEqual([e.name for e in evs], ["queue_created", "priority"])
        self.assertEqual((evs[0].pid, evs[0].gpu_id, evs[0].data), (5000, 2, 7))
        self.assertEqual((evs[1].pid, evs[1].queue_id, evs[1].data), (4343, 2, 0))


if __name__ == "__main__":
    unittest.main()
